#include "bench/dataset_formats.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>

namespace sf::bench {
namespace {

using Json = nlohmann::json;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Result<std::string> read_gzip(const std::string& path) {
  // Check first, so a missing file reads as such and not as a gzip failure.
  if (!std::ifstream(path)) return Status::Error(path + ": cannot open dataset file");
  FILE* pipe = popen(("gzip -dc -- " + shell_quote(path) + " 2>/dev/null").c_str(), "r");
  if (!pipe) return Status::Error(path + ": cannot run gzip to decompress it");
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) text.append(buf, n);
  if (pclose(pipe) != 0) return Status::Error(path + ": gzip -dc failed (corrupt file, or gzip not installed)");
  return text;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Calls fn(object, line_number) for every non-empty line; stops at the first error.
Status for_each_jsonl(const std::string& path, const std::function<Status(const Json&, int)>& fn) {
  SF_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  size_t pos = 0;
  for (int line_no = 1; pos < text.size(); ++line_no) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (trim(line).empty()) continue;
    Json obj = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!obj.is_object()) return Status::Errorf("%s:%d: not a JSON object", path.c_str(), line_no);
    SF_RETURN_IF_ERROR(fn(obj, line_no).with_context(path + ":" + std::to_string(line_no)));
  }
  return Status::Ok();
}

// A field as text: strings as they are, numbers (question_id, task_id) printed.
Result<std::string> field_text(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Errorf("missing field \"%s\"", key);
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return Status::Errorf("field \"%s\" is neither a string nor an integer", key);
}

Status require_text(const Prompt& p) {
  return trim(p.text).empty() ? Status::Error("empty prompt text") : Status::Ok();
}

// Loader for the formats that are one prompt per JSON line with fixed fields.
Result<std::vector<Prompt>> load_fields(const std::string& path, const std::string& dataset, const char* id_key,
                                        const char* text_key) {
  std::vector<Prompt> out;
  SF_RETURN_IF_ERROR(for_each_jsonl(path, [&](const Json& obj, int line_no) -> Status {
    Prompt p;
    p.dataset = p.category = dataset;
    if (id_key) {
      SF_ASSIGN_OR_RETURN(p.id, field_text(obj, id_key));
    } else {
      p.id = std::to_string(line_no - 1);
    }
    if (p.id.find('/') == std::string::npos) p.id = dataset + "/" + p.id;
    SF_ASSIGN_OR_RETURN(p.text, field_text(obj, text_key));
    SF_RETURN_IF_ERROR(require_text(p));
    out.push_back(std::move(p));
    return Status::Ok();
  }));
  return out;
}

// The first sentence: up to the first '.', '!' or '?' that ends a word, else the first line.
std::string first_sentence(const std::string& story) {
  for (size_t i = 0; i < story.size(); ++i) {
    const char c = story[i];
    if (c == '\n') return story.substr(0, i);
    if ((c == '.' || c == '!' || c == '?') &&
        (i + 1 == story.size() || std::isspace(static_cast<unsigned char>(story[i + 1]))))
      return story.substr(0, i + 1);
  }
  return story;
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
  if (ends_with(path, ".gz")) return read_gzip(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open dataset file");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Result<std::vector<Prompt>> load_turns_jsonl(const std::string& path, const std::string& dataset) {
  std::vector<Prompt> out;
  SF_RETURN_IF_ERROR(for_each_jsonl(path, [&](const Json& obj, int) -> Status {
    Prompt p;
    p.dataset = dataset;
    SF_ASSIGN_OR_RETURN(std::string qid, field_text(obj, "question_id"));
    p.id = dataset + "/" + qid;
    SF_ASSIGN_OR_RETURN(p.category, field_text(obj, "category"));
    auto turns = obj.find("turns");
    if (turns == obj.end() || !turns->is_array() || turns->empty() || !(*turns)[0].is_string())
      return Status::Error("\"turns\" must be a non-empty array of strings");
    p.text = (*turns)[0].get<std::string>();
    SF_RETURN_IF_ERROR(require_text(p));
    out.push_back(std::move(p));
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Prompt>> load_human_eval(const std::string& path) {
  return load_fields(path, "human_eval", "task_id", "prompt");
}

Result<std::vector<Prompt>> load_gsm8k(const std::string& path) {
  return load_fields(path, "gsm8k", nullptr, "question");
}

Result<std::vector<Prompt>> load_mbpp(const std::string& path) { return load_fields(path, "mbpp", "task_id", "text"); }

Result<std::vector<Prompt>> load_tinystories(const std::string& path) {
  SF_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  static const std::string kMarker = "<|endoftext|>";
  std::vector<Prompt> out;
  size_t pos = 0;
  for (bool first = true;; first = false) {
    const size_t end = text.find(kMarker, pos);
    const std::string story = trim(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    // Stories start with a capital letter; a chunk before the first marker that does not is
    // the tail of a story the sample cut off.
    const bool fragment = first && !story.empty() && !std::isupper(static_cast<unsigned char>(story[0]));
    if (!story.empty() && !fragment) {
      Prompt p;
      p.dataset = p.category = "tinystories";
      p.id = "tinystories/" + std::to_string(out.size());
      p.text = first_sentence(story);
      out.push_back(std::move(p));
    }
    if (end == std::string::npos) break;
    pos = end + kMarker.size();
  }
  if (out.empty()) return Status::Error(path + ": no stories found");
  return out;
}

}  // namespace sf::bench
