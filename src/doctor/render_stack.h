// Rendering `stack` and `stack check`: one record, a terminal table and a JSON document
// (schemas trainrig.stack and trainrig.stack.check, docs/stack.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/stack_check.h"
#include "stack/install_steps.h"
#include "stack/recommend.h"

namespace trainrig::stack {

inline constexpr const char* kStackSchema = "trainrig.stack";
inline constexpr const char* kStackCheckSchema = "trainrig.stack.check";
inline constexpr int kStackSchemaVersion = 1;

struct StackView {
    const StackData* data = nullptr;
    const Recommendation* rec = nullptr;
    const Distro* distro = nullptr;  // null: no install steps
    std::string distro_note;         // why there are no steps
    std::vector<InstallStep> steps;
};

std::string render_stack_table(const StackView& v, bool verbose, bool color);
nlohmann::json render_stack_json(const StackView& v);

struct CheckView {
    const StackData* data = nullptr;
    const Recommendation* rec = nullptr;
    const StackCheck* check = nullptr;
    std::string hostname;
    std::string source;  // "live machine", "snapshot FILE", "machine tree DIR"
};

std::string render_check_table(const CheckView& v, bool verbose, bool color);
nlohmann::json render_check_json(const CheckView& v);

}  // namespace trainrig::stack
