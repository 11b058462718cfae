#include "convert/model_packer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "convert/conversion_progress.h"
#include "convert/gguf_stream_writer.h"
#include "model/model_weights.h"
#include "model/stored_layout.h"
#include "quant/row_panels.h"

namespace sf {
namespace {

constexpr uint32_t kPackAlignment = 4096;  // O_DIRECT block size the streamer reads in

// "blk.12.attn_q.weight" -> 12; nullopt for tensors outside any layer.
std::optional<int> layer_of(const std::string& name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  int layer = -1;
  const auto [end, ec] = std::from_chars(first, last, layer);
  if (ec != std::errc() || end == first || end == last || *end != '.' || layer < 0) return std::nullopt;
  return layer;
}

// Read-only view of the whole input file; unmapped on destruction.
class MappedFile {
 public:
  static Result<MappedFile> map(const std::string& path, uint64_t size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::Errorf("%s: cannot open: %s", path.c_str(), std::strerror(errno));
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int map_errno = errno;
    ::close(fd);  // the mapping keeps the file open
    if (p == MAP_FAILED) return Status::Errorf("%s: cannot map: %s", path.c_str(), std::strerror(map_errno));
    return MappedFile(static_cast<const uint8_t*>(p), size);
  }
  MappedFile(MappedFile&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(o.size_) {}
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  }

  const uint8_t* data() const { return data_; }
  // Drops [offset, offset + n) from this process's resident set (the page cache keeps
  // what the kernel wants), so RSS stays at about one tensor.
  void release(uint64_t offset, uint64_t n) const {
    const uint64_t page = 4096;
    const uint64_t begin = offset / page * page;
    (void)madvise(const_cast<uint8_t*>(data_) + begin, offset + n - begin, MADV_DONTNEED);
  }

 private:
  MappedFile(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  uint64_t size_;
};

}  // namespace

std::vector<size_t> packed_tensor_order(const std::vector<gguf::TensorInfo>& tensors) {
  std::vector<size_t> order, output;
  std::map<int, std::vector<size_t>> layers;  // sorted by layer index; input order inside
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (const auto layer = layer_of(tensors[i].name)) {
      layers[*layer].push_back(i);
    } else if (gguf_name_of_stored(tensors[i].name) == "output.weight") {
      output.push_back(i);
    } else {
      order.push_back(i);
    }
  }
  for (auto& [layer, members] : layers) {
    // Matrices first in the streamer's order, so the span of a layer's matrices has no
    // norms or biases in the middle.
    std::vector<size_t> matrices;
    for (const std::string& name : layer_matrix_tensor_names(layer)) {
      const auto it = std::find_if(members.begin(), members.end(),
                                   [&](size_t i) { return gguf_name_of_stored(tensors[i].name) == name; });
      if (it != members.end()) {
        matrices.push_back(*it);
        members.erase(it);
      }
    }
    order.insert(order.end(), matrices.begin(), matrices.end());
    order.insert(order.end(), members.begin(), members.end());
  }
  order.insert(order.end(), output.begin(), output.end());
  return order;
}

Status pack_model(const std::string& in, const std::string& out, const PackOptions& options) {
  SF_ASSIGN_OR_RETURN(gguf::GgufFile f, gguf::GgufFile::open(in));
  if (f.tensors().empty()) return Status::Errorf("%s: has no tensors (a vocabulary-only file?)", in.c_str());

  GgufStreamWriter writer(out);
  writer.copy_metadata_from(f);
  writer.set("general.alignment", gguf::Value::u32(kPackAlignment));
  const std::vector<size_t> order = packed_tensor_order(f.tensors());
  std::vector<WeightLayout> layouts(f.tensors().size(), WeightLayout::kRows);  // what OUT stores
  uint64_t total_bytes = 0;
  int n_panels = 0;
  for (size_t i : order) {
    const gguf::TensorInfo& t = f.tensors()[i];
    const std::string_view name = gguf_name_of_stored(t.name);
    if (is_row_panel_tensor_name(t.name) && !can_store_as_row_panels(name, t.type, t.rows()))
      return Status::Errorf("%s: tensor '%s' cannot be stored as row panels (%s, %lld rows): the file is corrupt",
                            in.c_str(), t.name.c_str(), type_name(t.type), static_cast<long long>(t.rows()));
    if (options.row_panels && can_store_as_row_panels(name, t.type, t.rows())) {
      layouts[i] = WeightLayout::kRowPanels;
      ++n_panels;
    }
    writer.add_tensor(layouts[i] == WeightLayout::kRowPanels ? row_panel_tensor_name(name) : std::string(name), t.type,
                      t.dims);
    total_bytes += t.n_bytes;
  }
  if (options.row_panels && n_panels == 0)
    return Status::Errorf(
        "%s: no matrix can be stored as row panels (they exist for block-quantised layer matrices, Q4_0..Q8_0 "
        "and Q2_K..Q6_K, whose row count is a multiple of 16); pack without --row-panels",
        in.c_str());
  SF_ASSIGN_OR_RETURN(MappedFile input, MappedFile::map(in, f.file_size()));
  SF_RETURN_IF_ERROR(writer.begin());

  ConversionProgress progress("pack", total_bytes, order.size(), options.show_progress);
  std::vector<uint8_t> converted;  // one tensor whose layout changes
  for (size_t i : order) {
    const gguf::TensorInfo& t = f.tensors()[i];
    const uint8_t* bytes = input.data() + t.file_offset;
    const WeightLayout stored = is_row_panel_tensor_name(t.name) ? WeightLayout::kRowPanels : WeightLayout::kRows;
    if (stored != layouts[i]) {
      converted.assign(bytes, bytes + t.n_bytes);
      if (layouts[i] == WeightLayout::kRowPanels) {
        pack_row_panels(t.type, converted.data(), t.rows(), t.dims[0]);
      } else {
        unpack_row_panels(t.type, converted.data(), t.rows(), t.dims[0]);
      }
      bytes = converted.data();
    }
    SF_RETURN_IF_ERROR(writer.write_next_tensor(bytes, t.n_bytes));
    input.release(t.file_offset, t.n_bytes);
    progress.tensor_done(t.n_bytes);
  }
  SF_RETURN_IF_ERROR(writer.finish());
  progress.finish(out, writer.bytes_written());
  return Status::Ok();
}

}  // namespace sf
