// The report directory (docs/report.md): report.json, report.md, raw/…, and SHA256SUMS over every
// other file, in sha256sum(1)'s format. Written whole or not at all: into a temporary directory
// beside the target, each file fsynced, then renamed to its name; a failure (a full disk)
// removes the temporary directory and leaves nothing half written.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainrig::validate {

// PREFIX-UTCTIME ("trainrig-report-node07-20261207T101500Z"), with -2, -3 ... when runs in the
// same second would collide: a report directory's default name.
std::string fresh_dir_name(const std::string& prefix);

// `files`: relative path -> content. The directory must not exist yet.
Status write_report_dir(const std::filesystem::path& dir,
                        const std::map<std::string, std::string>& files);

struct VerifyResult {
    std::vector<std::string> ok, changed, missing, unlisted;  // relative paths
    bool intact() const { return changed.empty() && missing.empty() && unlisted.empty(); }
};
// Checks every file against SHA256SUMS; an error when the directory or its SHA256SUMS cannot be
// read or SHA256SUMS is malformed (the line is named).
Result<VerifyResult> verify_report_dir(const std::filesystem::path& dir);

}  // namespace trainrig::validate
