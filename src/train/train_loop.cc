#include "train/train_loop.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "base/check.h"
#include "base/fnv1a.h"
#include "base/output_file.h"
#include "base/timer.h"
#include "train/optimizer.h"

namespace sf::train {

namespace {

constexpr char kMagic[8] = {'S', 'F', 'T', 'R', 'C', 'K', 'P', '1'};
constexpr char kOldDistillMagic[8] = {'S', 'F', 'D', 'C', 'K', 'P', 'T', '1'};
constexpr size_t kRecentLosses = 20;

std::string identity_text(const CheckpointIdentity& id) {
  std::string s;
  for (const auto& [key, value] : id) s += key + "=" + value + "\n";
  return s;
}

CheckpointIdentity parse_identity(const std::string& text) {
  CheckpointIdentity id;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) id.emplace_back(line.substr(0, eq), line.substr(eq + 1));
    at = end + 1;
  }
  return id;
}

const std::string* find_key(const CheckpointIdentity& id, const std::string& key) {
  for (const auto& kv : id)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

// "role verifier here, draft in the checkpoint; ..." for every key that differs.
std::string identity_diff(const CheckpointIdentity& want, const CheckpointIdentity& got) {
  std::string out;
  auto add = [&](const std::string& key, const std::string* here, const std::string* there) {
    if (!out.empty()) out += "; ";
    out += key + " " + (here ? *here : "(none)") + " here, " + (there ? *there : "(none)") + " in the checkpoint";
  };
  for (const auto& [key, value] : want) {
    const std::string* other = find_key(got, key);
    if (!other || *other != value) add(key, &value, other);
  }
  for (const auto& [key, value] : got)
    if (!find_key(want, key)) add(key, nullptr, &value);
  return out;
}

// Writes pieces of the checkpoint through stdio while hashing them.
struct HashedWriter {
  FILE* f;
  uint64_t hash = kFnv1aSeed;
  bool ok = true;
  void put(const void* data, size_t n) {
    if (!ok) return;
    hash = fnv1a(data, n, hash);
    ok = std::fwrite(data, 1, n, f) == n;
  }
};

Status save_checkpoint(const std::string& path, const std::string& identity, int64_t step,
                       const std::vector<double>& recent, const std::vector<float>& params, AdamW& opt) {
  const std::string tmp = path + ".tmp";
  FILE* f = open_output_file(tmp);
  if (!f) return Status::Errorf("%s: cannot write checkpoint: %s", tmp.c_str(), std::strerror(errno));
  HashedWriter w{f};
  const auto id_len = static_cast<uint32_t>(identity.size());
  const auto n_params = static_cast<int64_t>(params.size());
  const auto n_recent = static_cast<uint32_t>(recent.size());
  w.put(kMagic, sizeof(kMagic));
  w.put(&id_len, sizeof(id_len));
  w.put(identity.data(), identity.size());
  w.put(&step, sizeof(step));
  w.put(&n_params, sizeof(n_params));
  w.put(&n_recent, sizeof(n_recent));
  w.put(recent.data(), recent.size() * sizeof(double));
  for (const std::vector<float>* v :
       {&params, const_cast<const std::vector<float>*>(&opt.m()), const_cast<const std::vector<float>*>(&opt.v())})
    w.put(v->data(), v->size() * sizeof(float));
  const uint64_t sum = w.hash;
  w.put(&sum, sizeof(sum));
  // A failed write leaves nothing behind and the previous checkpoint unchanged.
  return commit_output_file(f, w.ok, w.ok ? 0 : errno, tmp, path).with_context("writing the checkpoint");
}

// Reads fixed-size fields from the file's bytes; `short_read` records running off the end.
struct Reader {
  const std::string& bytes;
  size_t at = 0;
  bool short_read = false;
  void get(void* out, size_t n) {
    if (short_read || bytes.size() - at < n) {
      short_read = true;
      return;
    }
    std::memcpy(out, bytes.data() + at, n);
    at += n;
  }
};

Status load_checkpoint(const std::string& path, const CheckpointIdentity& want, std::vector<float>* params, AdamW* opt,
                       int64_t* step, std::vector<double>* recent) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::Errorf("%s: cannot open checkpoint: %s", path.c_str(), std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, n);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) return Status::Errorf("%s: cannot read checkpoint", path.c_str());
  const std::string fix = "; remove it to start over, or point --checkpoint elsewhere";
  if (bytes.size() >= sizeof(kOldDistillMagic) && std::memcmp(bytes.data(), kOldDistillMagic, 8) == 0)
    return Status::Errorf("%s: checkpoint in the format of an older specflash%s", path.c_str(), fix.c_str());
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return Status::Errorf("%s: not a specflash training checkpoint%s", path.c_str(), fix.c_str());

  Reader r{bytes, sizeof(kMagic)};
  uint32_t id_len = 0, n_recent = 0;
  int64_t file_step = 0, n_params = 0;
  r.get(&id_len, sizeof(id_len));
  std::string id(r.short_read || bytes.size() - r.at < id_len ? 0 : id_len, '\0');
  r.get(id.data(), id_len);
  r.get(&file_step, sizeof(file_step));
  r.get(&n_params, sizeof(n_params));
  r.get(&n_recent, sizeof(n_recent));
  // The size the header implies, computed only when the counts are small enough for the
  // file (a corrupt count must not overflow it).
  const bool counts_fit =
      !r.short_read && n_params >= 0 && static_cast<uint64_t>(n_params) <= bytes.size() / (3 * sizeof(float));
  const uint64_t need = counts_fit ? r.at + uint64_t{n_recent} * sizeof(double) +
                                         static_cast<uint64_t>(n_params) * 3 * sizeof(float) + sizeof(uint64_t)
                                   : 0;
  if (!counts_fit || need != bytes.size())
    return Status::Errorf("%s: checkpoint is truncated or corrupt (%zu bytes; its header needs %s)%s", path.c_str(),
                          bytes.size(), counts_fit ? std::to_string(need).c_str() : "more", fix.c_str());
  uint64_t stored_sum = 0;
  std::memcpy(&stored_sum, bytes.data() + bytes.size() - sizeof(stored_sum), sizeof(stored_sum));
  if (fnv1a(bytes.data(), bytes.size() - sizeof(stored_sum)) != stored_sum)
    return Status::Errorf("%s: checkpoint is corrupt (checksum mismatch)%s", path.c_str(), fix.c_str());

  const CheckpointIdentity got = parse_identity(id);
  if (const std::string diff = identity_diff(want, got); !diff.empty())
    return Status::Errorf("%s: checkpoint is from another training run (%s)%s", path.c_str(), diff.c_str(),
                          fix.c_str());
  if (n_params != static_cast<int64_t>(params->size()))
    return Status::Errorf("%s: checkpoint has %lld parameters, this run %zu%s", path.c_str(),
                          static_cast<long long>(n_params), params->size(), fix.c_str());
  recent->resize(n_recent);
  r.get(recent->data(), n_recent * sizeof(double));
  for (std::vector<float>* v : {params, &opt->m(), &opt->v()}) r.get(v->data(), v->size() * sizeof(float));
  *step = file_step;
  opt->set_steps_taken(file_step);
  return Status::Ok();
}

std::string format_duration(double s) {
  char buf[32];
  const int t = static_cast<int>(s + 0.5);
  if (t >= 3600)
    std::snprintf(buf, sizeof(buf), "%dh%02dm", t / 3600, t / 60 % 60);
  else
    std::snprintf(buf, sizeof(buf), "%dm%02ds", t / 60, t % 60);
  return buf;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

Result<LoopResult> run_train_loop(std::vector<float>& params, const std::vector<uint8_t>& decay_mask,
                                  const LoopOptions& o, const StepFn& step_fn) {
  const auto n_params = static_cast<int64_t>(params.size());
  AdamW opt({o.lr, 0.9f, 0.95f, 1e-8f, o.weight_decay}, n_params);
  const std::string identity = identity_text(o.identity);
  LoopResult result;
  std::vector<double> recent;
  int64_t start = 0;
  if (o.resume && !o.checkpoint.empty()) {
    if (FILE* f = std::fopen(o.checkpoint.c_str(), "rb")) {
      std::fclose(f);
      SF_RETURN_IF_ERROR(load_checkpoint(o.checkpoint, o.identity, &params, &opt, &start, &recent));
      if (start > o.steps)
        return Status::Errorf("%s: checkpoint is at step %lld, past --steps %lld", o.checkpoint.c_str(),
                              static_cast<long long>(start), static_cast<long long>(o.steps));
      result.resumed_from = start;
      if (o.progress)
        std::fprintf(stderr, "%s: resuming from %s at step %lld/%lld\n", o.label.c_str(), o.checkpoint.c_str(),
                     static_cast<long long>(start), static_cast<long long>(o.steps));
    }
  }

  std::vector<float> grad(static_cast<size_t>(n_params));
  Stopwatch timer;
  double last_line = -1e9;
  result.last_step = start;
  for (int64_t step = start; step < o.steps; ++step) {
    const double loss = step_fn(step, params.data(), grad.data());
    clip_grad_norm(grad.data(), n_params, o.clip);
    const float lr = cosine_lr(step, o.steps, o.warmup, o.lr, o.lr * o.min_lr_ratio);
    opt.step(params.data(), grad.data(), lr, decay_mask);
    recent.push_back(loss);
    if (recent.size() > kRecentLosses) recent.erase(recent.begin());
    result.last_loss = loss;
    result.last_step = step + 1;

    const double elapsed = timer.elapsed();
    const int64_t done = step + 1 - start;
    result.seconds = elapsed;
    result.tokens_per_s = elapsed > 0 ? static_cast<double>(done * o.tokens_per_step) / elapsed : 0;
    const bool stopping = o.stop_after > 0 && step + 1 >= o.stop_after;
    if (o.progress && (elapsed - last_line >= 2.0 || step + 1 == o.steps || stopping)) {
      last_line = elapsed;
      const double eta = elapsed / static_cast<double>(done) * static_cast<double>(o.steps - step - 1);
      std::fprintf(stderr, "%s: step %lld/%lld, loss %.4f (mean of last %zu), lr %.2e, %.0f tok/s, ETA %s\n",
                   o.label.c_str(), static_cast<long long>(step + 1), static_cast<long long>(o.steps), mean(recent),
                   recent.size(), lr, result.tokens_per_s, format_duration(eta).c_str());
    }
    const bool periodic = o.checkpoint_every > 0 && ((step + 1) % o.checkpoint_every == 0 || step + 1 == o.steps);
    if (!o.checkpoint.empty() && (periodic || stopping))
      SF_RETURN_IF_ERROR(save_checkpoint(o.checkpoint, identity, step + 1, recent, params, opt));
    if (stopping) break;
  }
  result.final_loss = mean(recent);
  return result;
}

BatchSampler::BatchSampler(uint64_t seed, int64_t n, int64_t per_step)
    : rng_(seed), n_(n), batch_(static_cast<size_t>(per_step)) {}

const std::vector<int64_t>& BatchSampler::batch(int64_t step) {
  SF_CHECK(step >= next_step_);
  rng_.discard(static_cast<unsigned long long>(step - next_step_) * batch_.size());
  for (int64_t& i : batch_) i = static_cast<int64_t>(rng_() % static_cast<uint64_t>(n_));
  next_step_ = step + 1;
  return batch_;
}

LoopOptions head_loop_options(int64_t steps, float lr, float clip, std::string label) {
  LoopOptions lo;
  lo.steps = steps;
  lo.lr = lr;
  lo.min_lr_ratio = 0.1f;
  lo.warmup = steps / 10;
  lo.clip = clip;
  lo.label = std::move(label);
  return lo;
}

}  // namespace sf::train
