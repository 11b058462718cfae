#include "gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/output_file.h"

namespace sf::gguf {
namespace {

// Buffered little-endian writer over stdio; the first error sticks and is reported once.
class ByteSink {
 public:
  explicit ByteSink(FILE* f) : f_(f) {}
  void write(const void* p, size_t n) {
    if (ok_ && n > 0 && std::fwrite(p, 1, n, f_) != n) {
      ok_ = false;
      errno_ = errno;
    }
    pos_ += n;
  }
  template <typename T>
  void pod(T v) {
    write(&v, sizeof(T));
  }
  void string(const std::string& s) {
    pod<uint64_t>(s.size());
    write(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static const uint8_t zeros[4096] = {};
    while (pos_ % alignment != 0) write(zeros, std::min<uint64_t>(alignment - pos_ % alignment, sizeof(zeros)));
  }
  bool ok() const { return ok_; }
  int error() const { return errno_; }  // errno of the first failed write
  uint64_t pos() const { return pos_; }

 private:
  FILE* f_;
  bool ok_ = true;
  int errno_ = 0;
  uint64_t pos_ = 0;
};

void write_value_body(ByteSink& out, const Value& v);

void write_scalar(ByteSink& out, ValueType type, const Value& v) {
  switch (type) {
    case ValueType::kUint8:
      out.pod<uint8_t>(static_cast<uint8_t>(v.as_int()));
      break;
    case ValueType::kInt8:
      out.pod<int8_t>(static_cast<int8_t>(v.as_int()));
      break;
    case ValueType::kUint16:
      out.pod<uint16_t>(static_cast<uint16_t>(v.as_int()));
      break;
    case ValueType::kInt16:
      out.pod<int16_t>(static_cast<int16_t>(v.as_int()));
      break;
    case ValueType::kUint32:
      out.pod<uint32_t>(static_cast<uint32_t>(v.as_int()));
      break;
    case ValueType::kInt32:
      out.pod<int32_t>(static_cast<int32_t>(v.as_int()));
      break;
    case ValueType::kUint64:
      out.pod<uint64_t>(static_cast<uint64_t>(v.as_int()));
      break;
    case ValueType::kInt64:
      out.pod<int64_t>(v.as_int());
      break;
    case ValueType::kFloat32:
      out.pod<float>(static_cast<float>(v.as_double()));
      break;
    case ValueType::kFloat64:
      out.pod<double>(v.as_double());
      break;
    case ValueType::kBool:
      out.pod<uint8_t>(v.as_int() != 0);
      break;
    case ValueType::kString:
      out.string(v.as_string());
      break;
    case ValueType::kArray:
      write_value_body(out, v);
      break;
  }
}

void write_value_body(ByteSink& out, const Value& v) {
  if (v.type != ValueType::kArray) {
    write_scalar(out, v.type, v);
    return;
  }
  const Array& a = v.as_array();
  out.pod<uint32_t>(static_cast<uint32_t>(a.element_type));
  out.pod<uint64_t>(a.items.size());
  for (const Value& item : a.items) write_scalar(out, a.element_type, item);
}

}  // namespace

void GgufWriter::set(const std::string& key, Value value) {
  for (auto& kv : metadata_)
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::remove(const std::string& key) {
  std::erase_if(metadata_, [&](const auto& kv) { return kv.first == key; });
}

void GgufWriter::copy_metadata_from(const GgufFile& file, const std::string& key_prefix) {
  for (const auto& [key, value] : file.metadata())
    if (key.rfind(key_prefix, 0) == 0) set(key, value);
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> dims,
                            std::vector<uint8_t> data) {
  tensors_.push_back({name, type, std::move(dims), std::move(data)});
}

Status GgufWriter::write(const std::string& path) const {
  uint64_t alignment = kDefaultAlignment;
  for (const auto& [key, value] : metadata_)
    if (key == "general.alignment") alignment = static_cast<uint64_t>(value.as_int());

  const std::string tmp = path + ".tmp";
  FILE* f = open_output_file(tmp);
  if (!f) return Status::Errorf("%s: cannot create: %s", tmp.c_str(), std::strerror(errno));
  std::vector<char> iobuf(1 << 20);
  std::setvbuf(f, iobuf.data(), _IOFBF, iobuf.size());
  ByteSink out(f);
  out.pod<uint32_t>(kMagic);
  out.pod<uint32_t>(3);
  out.pod<uint64_t>(tensors_.size());
  out.pod<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    out.string(key);
    out.pod<uint32_t>(static_cast<uint32_t>(value.type));
    write_value_body(out, value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    out.string(t.name);
    out.pod<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) out.pod<int64_t>(d);
    out.pod<uint32_t>(static_cast<uint32_t>(t.type));
    out.pod<uint64_t>(offset);
    offset += (t.data.size() + alignment - 1) / alignment * alignment;
  }
  out.pad_to(alignment);
  for (const auto& t : tensors_) {
    out.write(t.data.data(), t.data.size());
    out.pad_to(alignment);
  }
  // A failed write leaves nothing behind and the previous file at `path` unchanged.
  return commit_output_file(f, out.ok(), out.error(), tmp, path);
}

}  // namespace sf::gguf
