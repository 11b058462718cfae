#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

namespace sf::gguf {
namespace {

// ggml's names for the type ids specflash cannot compute with, so an error says "IQ4_NL"
// instead of a bare number (ids from ggml.h's enum ggml_type; gaps are retired ids).
const char* unsupported_type_name(uint32_t id) {
  switch (id) {
    case 4:
      return "Q4_2 (retired)";
    case 5:
      return "Q4_3 (retired)";
    case 9:
      return "Q8_1";
    case 15:
      return "Q8_K";
    case 16:
      return "IQ2_XXS";
    case 17:
      return "IQ2_XS";
    case 18:
      return "IQ3_XXS";
    case 19:
      return "IQ1_S";
    case 20:
      return "IQ4_NL";
    case 21:
      return "IQ3_S";
    case 22:
      return "IQ2_S";
    case 23:
      return "IQ4_XS";
    case 24:
      return "I8";
    case 25:
      return "I16";
    case 26:
      return "I32";
    case 27:
      return "I64";
    case 28:
      return "F64";
    case 29:
      return "IQ1_M";
    case 31:
      return "Q4_0_4_4 (retired)";
    case 32:
      return "Q4_0_4_8 (retired)";
    case 33:
      return "Q4_0_8_8 (retired)";
    case 34:
      return "TQ1_0";
    case 35:
      return "TQ2_0";
    case 39:
      return "MXFP4";
    default:
      return nullptr;
  }
}

// Limits that reject corrupt counts before they become huge allocations.
constexpr uint64_t kMaxDims = 4;
constexpr uint64_t kMaxStringBytes = 1ull << 30;

// Sequential reader over the file header with its own buffer; every read checks bounds
// against the file size so truncation is reported, not read past.
class HeaderReader {
 public:
  HeaderReader(int fd, uint64_t file_size, std::string path) : fd_(fd), file_size_(file_size), path_(std::move(path)) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return file_size_ - pos_; }

  Status read(void* dst, uint64_t n, const char* what) {
    if (n > remaining())
      return Status::Errorf(
          "%s: file is truncated (needed %llu more bytes for %s at offset %llu, "
          "file has %llu)",
          path_.c_str(), static_cast<unsigned long long>(n), what, static_cast<unsigned long long>(pos_),
          static_cast<unsigned long long>(file_size_));
    auto* out = static_cast<uint8_t*>(dst);
    while (n > 0) {
      if (buf_pos_ == buf_len_) SF_RETURN_IF_ERROR(refill());
      const uint64_t take = std::min<uint64_t>(n, buf_len_ - buf_pos_);
      std::memcpy(out, buf_.data() + buf_pos_, take);
      buf_pos_ += take;
      pos_ += take;
      out += take;
      n -= take;
    }
    return Status::Ok();
  }

  template <typename T>
  Status read_pod(T* v, const char* what) {
    return read(v, sizeof(T), what);
  }

  Status read_string(std::string* s, const char* what) {
    uint64_t len = 0;
    SF_RETURN_IF_ERROR(read_pod(&len, what));
    if (len > kMaxStringBytes || len > remaining())
      return Status::Errorf("%s: corrupt GGUF: %s has length %llu at offset %llu (file too short)", path_.c_str(), what,
                            static_cast<unsigned long long>(len), static_cast<unsigned long long>(pos_));
    s->resize(len);
    return read(s->data(), len, what);
  }

 private:
  Status refill() {
    buf_.resize(1 << 20);
    ssize_t got;
    do {
      got = ::pread(fd_, buf_.data(), buf_.size(), static_cast<off_t>(pos_));
    } while (got < 0 && errno == EINTR);
    if (got <= 0)
      return Status::Errorf("%s: read failed at offset %llu: %s", path_.c_str(), static_cast<unsigned long long>(pos_),
                            got < 0 ? std::strerror(errno) : "unexpected end of file");
    buf_len_ = static_cast<uint64_t>(got);
    buf_pos_ = 0;
    return Status::Ok();
  }

  int fd_;
  uint64_t file_size_;
  std::string path_;
  uint64_t pos_ = 0;
  std::vector<uint8_t> buf_;
  uint64_t buf_pos_ = 0, buf_len_ = 0;
};

Status read_value(HeaderReader& r, ValueType type, Value* out, const std::string& key, const std::string& path,
                  int depth);

template <typename T>
Status read_scalar(HeaderReader& r, Value* out, ValueType type, const char* what) {
  T v{};
  SF_RETURN_IF_ERROR(r.read_pod(&v, what));
  out->type = type;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    out->data = static_cast<double>(v);
  } else if constexpr (std::is_signed_v<T>) {
    out->data = static_cast<int64_t>(v);
  } else {
    out->data = static_cast<uint64_t>(v);
  }
  return Status::Ok();
}

Status read_value(HeaderReader& r, ValueType type, Value* out, const std::string& key, const std::string& path,
                  int depth) {
  const char* what = "metadata value";
  switch (type) {
    case ValueType::kUint8:
      return read_scalar<uint8_t>(r, out, type, what);
    case ValueType::kInt8:
      return read_scalar<int8_t>(r, out, type, what);
    case ValueType::kUint16:
      return read_scalar<uint16_t>(r, out, type, what);
    case ValueType::kInt16:
      return read_scalar<int16_t>(r, out, type, what);
    case ValueType::kUint32:
      return read_scalar<uint32_t>(r, out, type, what);
    case ValueType::kInt32:
      return read_scalar<int32_t>(r, out, type, what);
    case ValueType::kUint64:
      return read_scalar<uint64_t>(r, out, type, what);
    case ValueType::kInt64:
      return read_scalar<int64_t>(r, out, type, what);
    case ValueType::kFloat32:
      return read_scalar<float>(r, out, type, what);
    case ValueType::kFloat64:
      return read_scalar<double>(r, out, type, what);
    case ValueType::kBool: {
      uint8_t b = 0;
      SF_RETURN_IF_ERROR(r.read_pod(&b, what));
      out->type = type;
      out->data = b != 0;
      return Status::Ok();
    }
    case ValueType::kString: {
      std::string s;
      SF_RETURN_IF_ERROR(r.read_string(&s, "metadata string"));
      out->type = type;
      out->data = std::move(s);
      return Status::Ok();
    }
    case ValueType::kArray: {
      if (depth > 4)
        return Status::Errorf("%s: corrupt GGUF: metadata '%s' nests arrays too deeply", path.c_str(), key.c_str());
      uint32_t elem_raw = 0;
      uint64_t count = 0;
      SF_RETURN_IF_ERROR(r.read_pod(&elem_raw, "array element type"));
      SF_RETURN_IF_ERROR(r.read_pod(&count, "array length"));
      if (!is_valid_value_type(elem_raw))
        return Status::Errorf("%s: corrupt GGUF: metadata '%s' has unknown array element type %u", path.c_str(),
                              key.c_str(), elem_raw);
      // Every element takes at least one byte, so a count beyond the remaining bytes is
      // corrupt (checked before allocating).
      if (count > r.remaining())
        return Status::Errorf(
            "%s: corrupt GGUF: metadata '%s' claims %llu array items, more "
            "than the file holds",
            path.c_str(), key.c_str(), static_cast<unsigned long long>(count));
      Array arr;
      arr.element_type = static_cast<ValueType>(elem_raw);
      arr.items.resize(count);
      for (uint64_t i = 0; i < count; ++i)
        SF_RETURN_IF_ERROR(read_value(r, arr.element_type, &arr.items[i], key, path, depth + 1));
      out->type = type;
      out->data = std::move(arr);
      return Status::Ok();
    }
  }
  return Status::Errorf("%s: corrupt GGUF: metadata '%s' has unknown value type %u", path.c_str(), key.c_str(),
                        static_cast<unsigned>(type));
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

int64_t TensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t TensorInfo::rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

Result<GgufFile> GgufFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Errorf("%s: cannot open: %s", path.c_str(), std::strerror(errno));
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::Errorf("%s: cannot stat: %s", path.c_str(), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::Errorf("%s: is a directory, not a GGUF file", path.c_str());

  GgufFile file;
  file.path_ = path;
  file.file_size_ = static_cast<uint64_t>(st.st_size);
  HeaderReader r(fd, file.file_size_, path);

  uint32_t magic = 0;
  if (file.file_size_ < 4)
    return Status::Errorf("%s: not a GGUF file (file is only %llu bytes)", path.c_str(),
                          static_cast<unsigned long long>(file.file_size_));
  SF_RETURN_IF_ERROR(r.read_pod(&magic, "magic"));
  if (magic != kMagic)
    return Status::Errorf("%s: not a GGUF file (bad magic 0x%08x, expected 'GGUF')", path.c_str(), magic);
  SF_RETURN_IF_ERROR(r.read_pod(&file.version_, "version"));
  if (file.version_ == 1)
    return Status::Errorf("%s: GGUF version 1 is not supported (re-convert the model; v2 and v3 are)", path.c_str());
  if (file.version_ != 2 && file.version_ != 3)
    return Status::Errorf("%s: unsupported GGUF version %u (supported: 2, 3)", path.c_str(), file.version_);

  uint64_t n_tensors = 0, n_kv = 0;
  SF_RETURN_IF_ERROR(r.read_pod(&n_tensors, "tensor count"));
  SF_RETURN_IF_ERROR(r.read_pod(&n_kv, "metadata count"));
  if (n_tensors > r.remaining() / 8 || n_kv > r.remaining() / 8)
    return Status::Errorf("%s: corrupt GGUF header: %llu tensors / %llu metadata entries cannot fit in the file",
                          path.c_str(), static_cast<unsigned long long>(n_tensors),
                          static_cast<unsigned long long>(n_kv));

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key;
    SF_RETURN_IF_ERROR(r.read_string(&key, "metadata key"));
    uint32_t type_raw = 0;
    SF_RETURN_IF_ERROR(r.read_pod(&type_raw, "metadata type"));
    if (!is_valid_value_type(type_raw))
      return Status::Errorf("%s: corrupt GGUF: metadata '%s' has unknown value type %u", path.c_str(), key.c_str(),
                            type_raw);
    Value v;
    SF_RETURN_IF_ERROR(read_value(r, static_cast<ValueType>(type_raw), &v, key, path, 0));
    if (file.metadata_index_.count(key))
      return Status::Errorf("%s: corrupt GGUF: duplicate metadata key '%s'", path.c_str(), key.c_str());
    file.metadata_index_[key] = file.metadata_.size();
    file.metadata_.emplace_back(std::move(key), std::move(v));
  }

  if (const Value* a = file.find("general.alignment")) {
    const int64_t al = a->is_integer() ? a->as_int() : 0;
    if (al <= 0 || (al & (al - 1)) != 0 || al > (1 << 20))
      return Status::Errorf("%s: corrupt GGUF: general.alignment %lld is not a power of two", path.c_str(),
                            static_cast<long long>(al));
    file.alignment_ = static_cast<uint32_t>(al);
  }

  file.tensors_.resize(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo& t = file.tensors_[i];
    SF_RETURN_IF_ERROR(r.read_string(&t.name, "tensor name"));
    uint32_t n_dims = 0;
    SF_RETURN_IF_ERROR(r.read_pod(&n_dims, "tensor dims"));
    if (n_dims == 0 || n_dims > kMaxDims)
      return Status::Errorf("%s: corrupt GGUF: tensor '%s' has %u dimensions (1..4 allowed)", path.c_str(),
                            t.name.c_str(), n_dims);
    t.dims.resize(n_dims);
    for (uint32_t d = 0; d < n_dims; ++d) {
      SF_RETURN_IF_ERROR(r.read_pod(&t.dims[d], "tensor dim"));
      if (t.dims[d] <= 0 || t.dims[d] > (int64_t{1} << 40))
        return Status::Errorf("%s: corrupt GGUF: tensor '%s' has dimension %lld", path.c_str(), t.name.c_str(),
                              static_cast<long long>(t.dims[d]));
    }
    uint32_t type_raw = 0;
    SF_RETURN_IF_ERROR(r.read_pod(&type_raw, "tensor type"));
    const TypeInfo* info = find_type_info(type_raw);
    if (info == nullptr) {
      const char* known = unsupported_type_name(type_raw);
      const std::string type = known != nullptr ? std::string(known) + " (ggml type " + std::to_string(type_raw) + ")"
                                                : std::to_string(type_raw) + " (not a ggml type either)";
      return Status::Errorf(
          "%s: tensor '%s' has weight type %s, which specflash does not support "
          "(supported: F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K..Q6_K; convert with llama-quantize, e.g. to Q4_K_M)",
          path.c_str(), t.name.c_str(), type.c_str());
    }
    t.type = info->type;
    SF_RETURN_IF_ERROR(r.read_pod(&t.relative_offset, "tensor offset"));
    if (t.dims[0] % info->block_size != 0)
      return Status::Errorf("%s: corrupt GGUF: tensor '%s' row of %lld is not a multiple of %s's block size %lld",
                            path.c_str(), t.name.c_str(), static_cast<long long>(t.dims[0]), info->name,
                            static_cast<long long>(info->block_size));
    // Each dimension is at most 2^40, so their product can overflow int64: multiply checked.
    int64_t n = 1;
    bool overflow = false;
    for (int64_t d : t.dims) overflow = overflow || __builtin_mul_overflow(n, d, &n);
    if (overflow || n <= 0 || n > (int64_t{1} << 42))
      return Status::Errorf("%s: corrupt GGUF: tensor '%s' has an impossible size", path.c_str(), t.name.c_str());
    t.n_bytes = static_cast<uint64_t>(n / info->block_size) * info->block_bytes;
    if (file.tensor_index_.count(t.name))
      return Status::Errorf("%s: corrupt GGUF: duplicate tensor '%s'", path.c_str(), t.name.c_str());
    file.tensor_index_[t.name] = i;
  }

  const uint64_t al = file.alignment_;
  file.data_offset_ = (r.position() + al - 1) / al * al;
  for (TensorInfo& t : file.tensors_) {
    if (t.relative_offset % al != 0)
      return Status::Errorf("%s: corrupt GGUF: tensor '%s' offset %llu is not aligned to %llu", path.c_str(),
                            t.name.c_str(), static_cast<unsigned long long>(t.relative_offset),
                            static_cast<unsigned long long>(al));
    t.file_offset = file.data_offset_ + t.relative_offset;
    if (t.file_offset < t.relative_offset || t.file_offset + t.n_bytes < t.file_offset ||
        t.file_offset + t.n_bytes > file.file_size_)
      return Status::Errorf(
          "%s: tensor '%s' points past the end of the file (bytes %llu..%llu, file has %llu); "
          "the file is truncated or corrupt",
          path.c_str(), t.name.c_str(), static_cast<unsigned long long>(t.file_offset),
          static_cast<unsigned long long>(t.file_offset + t.n_bytes), static_cast<unsigned long long>(file.file_size_));
  }
  return file;
}

const Value* GgufFile::find(const std::string& key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

std::optional<std::string> GgufFile::get_string(const std::string& key) const {
  const Value* v = find(key);
  if (!v || !v->is_string()) return std::nullopt;
  return v->as_string();
}

std::optional<int64_t> GgufFile::get_int(const std::string& key) const {
  const Value* v = find(key);
  if (!v || !(v->is_integer() || v->type == ValueType::kBool)) return std::nullopt;
  return v->as_int();
}

std::optional<double> GgufFile::get_float(const std::string& key) const {
  const Value* v = find(key);
  if (!v || !(v->is_float() || v->is_integer())) return std::nullopt;
  return v->as_double();
}

std::optional<bool> GgufFile::get_bool(const std::string& key) const {
  const Value* v = find(key);
  if (!v || !(v->type == ValueType::kBool || v->is_integer())) return std::nullopt;
  return v->as_int() != 0;
}

std::optional<std::vector<std::string>> GgufFile::get_string_array(const std::string& key) const {
  const Value* v = find(key);
  if (!v || !v->is_array() || v->as_array().element_type != ValueType::kString) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(v->as_array().items.size());
  for (const Value& item : v->as_array().items) out.push_back(item.as_string());
  return out;
}

std::optional<std::vector<float>> GgufFile::get_float_array(const std::string& key) const {
  const Value* v = find(key);
  if (!v || !v->is_array()) return std::nullopt;
  const Array& a = v->as_array();
  if (a.element_type == ValueType::kString || a.element_type == ValueType::kArray) return std::nullopt;
  std::vector<float> out;
  out.reserve(a.items.size());
  for (const Value& item : a.items) out.push_back(static_cast<float>(item.as_double()));
  return out;
}

std::optional<std::vector<int64_t>> GgufFile::get_int_array(const std::string& key) const {
  const Value* v = find(key);
  if (!v || !v->is_array()) return std::nullopt;
  const Array& a = v->as_array();
  if (a.element_type == ValueType::kString || a.element_type == ValueType::kArray) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(a.items.size());
  for (const Value& item : a.items) out.push_back(item.as_int());
  return out;
}

const TensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<std::vector<uint8_t>> GgufFile::read_tensor_data(const TensorInfo& t) const {
  std::vector<uint8_t> data(t.n_bytes);
  SF_RETURN_IF_ERROR(read_tensor_into(t, data.data()));
  return data;
}

Status GgufFile::read_tensor_into(const TensorInfo& t, void* dst) const {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Errorf("%s: cannot open: %s", path_.c_str(), std::strerror(errno));
  FdCloser closer{fd};
  auto* out = static_cast<uint8_t*>(dst);
  uint64_t done = 0;
  while (done < t.n_bytes) {
    const ssize_t got = ::pread(fd, out + done, t.n_bytes - done, static_cast<off_t>(t.file_offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return Status::Errorf("%s: reading tensor '%s' failed: %s", path_.c_str(), t.name.c_str(),
                            got < 0 ? std::strerror(errno) : "unexpected end of file");
    done += static_cast<uint64_t>(got);
  }
  return Status::Ok();
}

}  // namespace sf::gguf
