// Status and Result<T>: how I/O and user-input failures travel up to the caller.
// A failed Status carries a one-line message a user can act on ("model.gguf: tensor
// 'blk.0.attn_q.weight' points past the end of the file"). Broken internal invariants are
// not Status values; they abort through SF_CHECK (check.h).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sf {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message), true); }
  // printf-style convenience: Status::Errorf("%s: bad magic", path.c_str()).
  template <typename... Args>
  static Status Errorf(const char* fmt, Args... args) {
    char buf[1024];
    std::snprintf(buf, sizeof(buf), fmt, args...);
    return Error(buf);
  }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }
  // Prefixes context onto an error ("loading draft: " + message). No-op on OK.
  Status with_context(const std::string& context) const { return ok() ? *this : Error(context + ": " + message_); }

 private:
  Status(std::string message, bool failed) : message_(std::move(message)), failed_(failed) {}
  std::string message_;
  bool failed_ = false;
};

// Either a value or a failed Status. Access value() only after checking ok().
template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {}  // NOLINT: must be a failed Status

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace sf

// Propagate a failed Status from an expression returning Status.
#define SF_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::sf::Status sf_status_ = (expr);        \
    if (!sf_status_.ok()) return sf_status_; \
  } while (0)

#define SF_CONCAT_INNER(a, b) a##b
#define SF_CONCAT(a, b) SF_CONCAT_INNER(a, b)
// SF_ASSIGN_OR_RETURN(auto x, make_x()); propagates the failure, else binds the value.
#define SF_ASSIGN_OR_RETURN(decl, expr)                                                       \
  auto SF_CONCAT(sf_result_, __LINE__) = (expr);                                              \
  if (!SF_CONCAT(sf_result_, __LINE__).ok()) return SF_CONCAT(sf_result_, __LINE__).status(); \
  decl = std::move(SF_CONCAT(sf_result_, __LINE__)).value()
