#include "convert/gguf_stream_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/output_file.h"

namespace sf {
namespace {

// Serialises metadata values into a byte string (the header is small, so it is built in
// memory and written once).
class HeaderBytes {
 public:
  template <typename T>
  void pod(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  void string(const std::string& s) {
    pod<uint64_t>(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void value_body(gguf::ValueType type, const gguf::Value& v) {
    using gguf::ValueType;
    switch (type) {
      case ValueType::kUint8:
        pod<uint8_t>(static_cast<uint8_t>(v.as_int()));
        break;
      case ValueType::kInt8:
        pod<int8_t>(static_cast<int8_t>(v.as_int()));
        break;
      case ValueType::kUint16:
        pod<uint16_t>(static_cast<uint16_t>(v.as_int()));
        break;
      case ValueType::kInt16:
        pod<int16_t>(static_cast<int16_t>(v.as_int()));
        break;
      case ValueType::kUint32:
        pod<uint32_t>(static_cast<uint32_t>(v.as_int()));
        break;
      case ValueType::kInt32:
        pod<int32_t>(static_cast<int32_t>(v.as_int()));
        break;
      case ValueType::kUint64:
        pod<uint64_t>(static_cast<uint64_t>(v.as_int()));
        break;
      case ValueType::kInt64:
        pod<int64_t>(v.as_int());
        break;
      case ValueType::kFloat32:
        pod<float>(static_cast<float>(v.as_double()));
        break;
      case ValueType::kFloat64:
        pod<double>(v.as_double());
        break;
      case ValueType::kBool:
        pod<uint8_t>(v.as_int() != 0);
        break;
      case ValueType::kString:
        string(v.as_string());
        break;
      case ValueType::kArray: {
        const gguf::Array& a = v.as_array();
        pod<uint32_t>(static_cast<uint32_t>(a.element_type));
        pod<uint64_t>(a.items.size());
        for (const gguf::Value& item : a.items) value_body(a.element_type, item);
        break;
      }
    }
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

uint64_t align_up(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

}  // namespace

GgufStreamWriter::GgufStreamWriter(std::string path) : path_(std::move(path)), tmp_path_(path_ + ".tmp") {}

GgufStreamWriter::~GgufStreamWriter() {
  if (!finished_) discard();
}

void GgufStreamWriter::discard() {
  if (file_ != nullptr) {
    abandon_output_file(file_, tmp_path_);
    file_ = nullptr;
  }
}

void GgufStreamWriter::set(const std::string& key, gguf::Value value) {
  for (auto& kv : metadata_)
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  metadata_.emplace_back(key, std::move(value));
}

void GgufStreamWriter::remove(const std::string& key) {
  std::erase_if(metadata_, [&](const auto& kv) { return kv.first == key; });
}

void GgufStreamWriter::copy_metadata_from(const gguf::GgufFile& file, const std::string& key_prefix) {
  for (const auto& [key, value] : file.metadata())
    if (key.rfind(key_prefix, 0) == 0) set(key, value);
}

const gguf::Value* GgufStreamWriter::find(const std::string& key) const {
  for (const auto& kv : metadata_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

uint64_t GgufStreamWriter::add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> dims) {
  int64_t rows = 1;
  for (size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
  const uint64_t n_bytes = row_bytes(type, dims.empty() ? 1 : dims[0]) * static_cast<uint64_t>(rows);
  tensors_.push_back({name, type, std::move(dims), n_bytes});
  return n_bytes;
}

Status GgufStreamWriter::write_bytes(const void* p, uint64_t n) {
  if (n > 0 && std::fwrite(p, 1, n, file_) != n)
    return Status::Errorf("%s: write failed: %s", tmp_path_.c_str(), std::strerror(errno));
  pos_ += n;
  return Status::Ok();
}

Status GgufStreamWriter::pad_to_alignment() {
  static const uint8_t zeros[256] = {};
  while (pos_ % alignment_ != 0)
    SF_RETURN_IF_ERROR(write_bytes(zeros, std::min<uint64_t>(alignment_ - pos_ % alignment_, sizeof(zeros))));
  return Status::Ok();
}

Status GgufStreamWriter::begin() {
  if (file_ != nullptr || finished_) return Status::Errorf("%s: begin() called twice", path_.c_str());
  alignment_ = gguf::kDefaultAlignment;
  if (const gguf::Value* a = find("general.alignment")) {
    const int64_t al = a->is_integer() ? a->as_int() : 0;
    if (al <= 0 || (al & (al - 1)) != 0 || al > (1 << 20))
      return Status::Errorf("%s: general.alignment must be a power of two, got %lld", path_.c_str(),
                            static_cast<long long>(al));
    alignment_ = static_cast<uint64_t>(al);
  }

  HeaderBytes h;
  h.pod<uint32_t>(gguf::kMagic);
  h.pod<uint32_t>(3);
  h.pod<uint64_t>(tensors_.size());
  h.pod<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    h.string(key);
    h.pod<uint32_t>(static_cast<uint32_t>(value.type));
    h.value_body(value.type, value);
  }
  uint64_t offset = 0;
  for (const Declared& t : tensors_) {
    h.string(t.name);
    h.pod<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) h.pod<int64_t>(d);
    h.pod<uint32_t>(static_cast<uint32_t>(t.type));
    h.pod<uint64_t>(offset);
    offset += align_up(t.n_bytes, alignment_);
  }

  file_ = open_output_file(tmp_path_);
  if (file_ == nullptr) return Status::Errorf("%s: cannot create: %s", tmp_path_.c_str(), std::strerror(errno));
  io_buffer_.resize(4 << 20);
  std::setvbuf(file_, io_buffer_.data(), _IOFBF, io_buffer_.size());
  pos_ = 0;
  next_tensor_ = 0;
  SF_RETURN_IF_ERROR(write_bytes(h.bytes().data(), h.bytes().size()));
  return pad_to_alignment();
}

Status GgufStreamWriter::write_next_tensor(const void* data, uint64_t n_bytes) {
  if (file_ == nullptr) return Status::Errorf("%s: write_next_tensor() before begin()", path_.c_str());
  if (next_tensor_ >= tensors_.size())
    return Status::Errorf("%s: more tensor data than the %zu declared tensors", path_.c_str(), tensors_.size());
  const Declared& t = tensors_[next_tensor_];
  if (n_bytes != t.n_bytes)
    return Status::Errorf("%s: tensor '%s' got %llu bytes, declared %llu", path_.c_str(), t.name.c_str(),
                          static_cast<unsigned long long>(n_bytes), static_cast<unsigned long long>(t.n_bytes));
  SF_RETURN_IF_ERROR(write_bytes(data, n_bytes));
  SF_RETURN_IF_ERROR(pad_to_alignment());
  ++next_tensor_;
  return Status::Ok();
}

Status GgufStreamWriter::finish() {
  if (file_ == nullptr) return Status::Errorf("%s: finish() before begin()", path_.c_str());
  if (next_tensor_ != tensors_.size())
    return Status::Errorf("%s: only %zu of %zu tensors were written", path_.c_str(), next_tensor_, tensors_.size());
  FILE* f = file_;
  file_ = nullptr;
  // Every earlier write succeeded (write_bytes returns the first failure to the caller).
  SF_RETURN_IF_ERROR(commit_output_file(f, /*write_ok=*/true, 0, tmp_path_, path_));
  finished_ = true;
  return Status::Ok();
}

}  // namespace sf
