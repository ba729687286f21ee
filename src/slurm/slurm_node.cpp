#include "slurm/slurm_node.h"

#include <fmt/format.h>

#include <cctype>

#include "core/text.h"

namespace trainrig::slurm {

namespace {

// Where a field starts: at the line's start or after a space, a name then '='. Values may hold
// spaces (OS=Linux 6.1.0 #1 SMP ...), so a field ends where the next one starts.
bool field_starts_at(std::string_view line, size_t pos) {
    if (pos > 0 && line[pos - 1] != ' ') return false;
    if (pos >= line.size() || !std::isalpha(static_cast<unsigned char>(line[pos]))) return false;
    for (size_t i = pos + 1; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '=') return true;
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
    return false;
}

// Slurm ends a reason with " [user@2026-12-03T10:00:00]"; the reason is what comes before it,
// whatever it holds (a reason may contain "x=y").
size_t reason_end(std::string_view line, size_t from) {
    for (size_t open = line.find(" [", from); open != std::string_view::npos;
         open = line.find(" [", open + 1)) {
        const size_t close = line.find(']', open);
        if (close == std::string_view::npos) break;
        const std::string_view tag = line.substr(open + 2, close - open - 2);
        if (tag.find('@') != std::string_view::npos && tag.find(' ') == std::string_view::npos)
            return open;
    }
    return std::string_view::npos;
}

}  // namespace

bool SlurmNode::drained() const {
    for (const auto part : split(state, '+'))
        if (part == "DRAIN" || part == "DRAINED" || part == "DRAINING") return true;
    return false;
}

bool SlurmNode::drained_by_trainrig() const {
    return drained() && std::string_view(reason).starts_with(kReasonPrefix);
}

Result<SlurmNode> parse_node_line(std::string_view line) {
    SlurmNode node;
    size_t pos = 0;
    while (pos < line.size() && !field_starts_at(line, pos)) ++pos;
    while (pos < line.size()) {
        const size_t eq = line.find('=', pos);
        const std::string_view key = line.substr(pos, eq - pos);
        size_t end = std::string_view::npos;
        size_t next = line.size();
        if (key == "Reason") {
            end = reason_end(line, eq + 1);
            if (end != std::string_view::npos) {
                next = line.find(']', end) + 1;
                while (next < line.size() && !field_starts_at(line, next)) ++next;
            }
        }
        if (end == std::string_view::npos) {
            next = eq + 1;
            while (next < line.size() && !field_starts_at(line, next)) ++next;
            end = next;
        }
        const std::string value(trim(line.substr(eq + 1, end - eq - 1)));
        if (key == "NodeName") node.name = value;
        if (key == "State") node.state = value;
        if (key == "Reason" && value != "(null)") node.reason = value;
        if (key == "Partitions")
            for (const auto part : split(value, ','))
                if (!part.empty()) node.partitions.emplace_back(part);
        pos = next;
    }
    if (node.name.empty())
        return Status(Errc::kInvalidInput,
                      fmt::format("scontrol printed a node line without NodeName: '{}'",
                                  std::string(line.substr(0, 80))));
    return node;
}

Result<std::vector<SlurmNode>> parse_nodes(std::string_view text) {
    std::vector<SlurmNode> nodes;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        const std::string_view line = trim(text.substr(0, nl));
        if (!line.empty() && line != "No nodes in the system") {
            auto node = parse_node_line(line);
            if (!node) return node.status();
            nodes.push_back(std::move(node).value());
        }
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return nodes;
}

}  // namespace trainrig::slurm
