// Fact<T>: one thing a probe tried to learn about the machine. It is either absent (the machine
// has no such thing: no cpufreq, no NVIDIA driver), known, or failed (it exists but could not be
// read or parsed; the Status says what and where). Rules judge all three, so a garbled file
// becomes an `error` finding instead of a crash or a silent pass.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "core/status.h"

namespace trainrig {

template <class T>
class Fact {
public:
    enum class State { kAbsent, kKnown, kFailed };

    Fact() = default;
    static Fact known(T value) {
        Fact f;
        f.state_ = State::kKnown;
        f.value_ = std::move(value);
        return f;
    }
    static Fact absent() { return Fact(); }
    static Fact failed(Status status) {
        Fact f;
        f.state_ = State::kFailed;
        f.status_ = std::move(status);
        return f;
    }
    // From a Result: value -> known; kNotFound -> absent; any other failure -> failed.
    static Fact from(Result<T> r) {
        if (r.ok()) return known(std::move(r).value());
        if (r.status().code() == Errc::kNotFound) return absent();
        return failed(r.status());
    }

    State state() const { return state_; }
    bool is_known() const { return state_ == State::kKnown; }
    bool is_absent() const { return state_ == State::kAbsent; }
    bool is_failed() const { return state_ == State::kFailed; }
    const T& value() const { return *value_; }
    T& value() { return *value_; }
    const T* get() const { return value_ ? &*value_ : nullptr; }
    // The value when known; nothing when absent or failed.
    std::optional<T> optional() const { return is_known() ? value_ : std::nullopt; }
    const Status& status() const { return status_; }

    friend bool operator==(const Fact& a, const Fact& b) {
        return a.state_ == b.state_ && a.value_ == b.value_ &&
               a.status_.message() == b.status_.message();
    }

private:
    State state_ = State::kAbsent;
    std::optional<T> value_;
    Status status_;
};

}  // namespace trainrig

// JSON form: absent -> null; known -> the value; failed -> {"error": "...", "error_kind": "..."}.
// "error_kind" marks a failure: no value type of the snapshot has a member of that name.
namespace nlohmann {
template <class T>
struct adl_serializer<trainrig::Fact<T>> {
    static void to_json(json& j, const trainrig::Fact<T>& f) {
        switch (f.state()) {
            case trainrig::Fact<T>::State::kAbsent:
                j = nullptr;
                break;
            case trainrig::Fact<T>::State::kKnown:
                j = f.value();
                break;
            case trainrig::Fact<T>::State::kFailed:
                j = json{{"error", f.status().message()},
                         {"error_kind", trainrig::errc_name(f.status().code())}};
                break;
        }
    }
    static void from_json(const json& j, trainrig::Fact<T>& f) {
        if (j.is_null()) {
            f = trainrig::Fact<T>::absent();
        } else if (j.is_object() && j.contains("error_kind")) {
            f = trainrig::Fact<T>::failed(
                trainrig::Status(trainrig::errc_from_name(j.at("error_kind").get<std::string>()),
                                 j.value("error", std::string())));
        } else {
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                // A hand-edited 1e300 or -1 must not wrap into a plausible number.
                if (!j.is_number_integer() || (std::is_unsigned_v<T> && !j.is_number_unsigned()))
                    throw json::type_error::create(
                        302,
                        "expected a non-negative integer" +
                            std::string(std::is_unsigned_v<T> ? "" : " (or negative)"),
                        &j);
            }
            f = trainrig::Fact<T>::known(j.get<T>());
        }
    }
};
}  // namespace nlohmann
