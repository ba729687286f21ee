// Status and Result<T>: how library code reports failure without exceptions. A failure carries
// a kind (for callers that branch on it), one sentence saying what and where, and a next step.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace trainrig {

enum class Errc {
    kOk,
    kNotFound,      // the file, key or device does not exist
    kPermission,    // exists, but this user may not read it
    kInvalidInput,  // read fine, content is not what the format says
    kIo,            // the read or write itself failed
    kUnsupported,   // this machine or build cannot do it
    kInternal,      // a bug in trainrig
};

// Stable lower-case name of an error kind, used in JSON ("permission", "not_found", ...).
std::string_view errc_name(Errc code);
Errc errc_from_name(std::string_view name);

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Errc code, std::string message, std::string next_step = {})
        : code_(code), message_(std::move(message)), next_step_(std::move(next_step)) {}

    bool ok() const { return code_ == Errc::kOk; }
    Errc code() const { return code_; }
    const std::string& message() const { return message_; }
    const std::string& next_step() const { return next_step_; }

private:
    Errc code_ = Errc::kOk;
    std::string message_;
    std::string next_step_;
};

inline Status ok_status() { return {}; }

// A failed Status about what the user gave (a flag, a file's value): kInvalidInput, with the
// next step when there is one.
inline Status invalid_input(std::string message, std::string next_step = {}) {
    return {Errc::kInvalidInput, std::move(message), std::move(next_step)};
}

// Builds a failed Status from errno after a system call on `what` (a path or a description).
Status errno_status(int err, std::string_view verb, std::string_view what);

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
    Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return std::holds_alternative<T>(v_); }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<T>(v_); }
    T& value() & { return std::get<T>(v_); }
    T&& value() && { return std::get<T>(std::move(v_)); }
    const T& operator*() const& { return value(); }
    const T* operator->() const { return &value(); }
    const Status& status() const {
        static const Status kOk;
        return ok() ? kOk : std::get<Status>(v_);
    }

private:
    std::variant<T, Status> v_;
};

}  // namespace trainrig

// Propagates a failed Status (or the Status of a failed Result) to the caller.
#define TRAINRIG_TRY(expr)                                         \
    do {                                                           \
        if (auto trainrig_try_s_ = (expr); !trainrig_try_s_.ok())  \
            return ::trainrig::detail::status_of(trainrig_try_s_); \
    } while (0)

namespace trainrig::detail {
inline const Status& status_of(const Status& s) { return s; }
template <class T>
const Status& status_of(const Result<T>& r) {
    return r.status();
}
}  // namespace trainrig::detail
