#include "fleet/fleet_validate.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/json_result.h"
#include "fleet/fleet_render.h"
#include "fleet/fleet_report.h"

namespace trainrig::fleet {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The files of a node's report the fleet judges from.
constexpr const char* kNodeFiles[] = {"report.json", "raw/snapshot.json"};

fleet::NodeInput missing_node(int rank, std::string why) {
    fleet::NodeInput n;
    n.name = fmt::format("rank {}", rank);
    n.source = fmt::format("MPI rank {}", rank);
    n.verdict = "UNKNOWN";
    n.problem = std::move(why);
    return n;
}

Status write_file(const fs::path& path, const std::string& text) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) return {Errc::kIo, fmt::format("cannot write {}", path.string())};
    return ok_status();
}

}  // namespace

std::string encode_node_payload(const std::map<std::string, std::string>& files,
                                const std::string& error, const std::string& warning) {
    json doc = {{"files", json::object()}, {"error", error}, {"warning", warning}};
    for (const char* name : kNodeFiles)
        if (auto it = files.find(name); it != files.end()) doc["files"][name] = it->second;
    return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<GatheredFleet> read_gathered(const std::vector<std::optional<std::string>>& payloads,
                                    double waited_s, const std::string& staging) {
    GatheredFleet out;
    std::set<std::string> hosts;
    for (size_t r = 0; r < payloads.size(); ++r) {
        const int rank = static_cast<int>(r);
        if (!payloads[r]) {
            out.nodes.push_back(missing_node(
                rank, fmt::format("did not report within {:.0f} s of rank 0", waited_s)));
            continue;
        }
        const json doc = json::parse(*payloads[r], nullptr, false);
        if (doc.is_discarded() || !doc.is_object() || !doc.contains("files")) {
            out.nodes.push_back(missing_node(rank, "sent something that is not a node report"));
            continue;
        }
        if (const std::string error = doc.value("error", ""); !error.empty()) {
            out.nodes.push_back(missing_node(rank, "validate failed there: " + error));
            continue;
        }
        json files = doc["files"];
        if (!files.contains("report.json") || !files["report.json"].is_string()) {
            out.nodes.push_back(missing_node(rank, "sent no report.json"));
            continue;
        }
        // Two ranks on one host (a test, or -npernode 2 by mistake) stay two nodes.
        json report = json::parse(files["report.json"].get<std::string>(), nullptr, false);
        if (report.is_object() && report.contains("host") && report["host"].is_string()) {
            const std::string host = report["host"];
            if (!hosts.insert(host).second) {
                report["host"] = fmt::format("{} (rank {})", host, rank);
                files["report.json"] = report.dump(1) + "\n";
            }
        }
        const std::string dir = fmt::format("nodes/rank{:04}", rank);
        for (const char* name : kNodeFiles) {
            if (!files.contains(name) || !files[name].is_string()) continue;
            const std::string text = files[name].get<std::string>();
            TRAINRIG_TRY(write_file(fs::path(staging) / dir / name, text));
            out.files[dir + "/" + name] = text;
        }
        out.nodes.push_back(fleet::load_node((fs::path(staging) / dir).string()));
        out.nodes.back().source = dir + "/report.json";  // where the fleet report keeps it
        if (const std::string w = doc.value("warning", ""); !w.empty())
            out.nodes.back().warnings.push_back("its own report directory: " + w);
    }
    return out;
}

std::map<std::string, std::string> fleet_report_files(const fleet::FleetResult& result,
                                                      const GatheredFleet& gathered,
                                                      int exit_code) {
    std::map<std::string, std::string> files = gathered.files;
    files[fleet::kFleetReportJson] =
        json_result(fleet::fleet_json(result), "validate --fleet", exit_code);
    files[fleet::kFleetReportMarkdown] = fleet::render_fleet_markdown(result);
    files[fleet::kFleetReportHtml] = fleet::render_fleet_html(result);
    return files;
}

Result<std::unique_ptr<train::Communicator>> join_fleet() {
    const char* tasks = std::getenv("SLURM_NTASKS");
    if (!train::launched_by_mpi() && tasks != nullptr && std::atoi(tasks) > 1)
        return Status(Errc::kInvalidInput,
                      fmt::format("srun started {} tasks without an MPI plugin, so no task "
                                  "can gather the others' reports",
                                  tasks),
                      "run it as `srun --mpi=pmix ... trainrig validate --fleet`, or under "
                      "mpirun");
    auto comm = train::make_communicator();
    if (!comm) return comm.status();
    train::hide_launcher_from_children();
    return comm;
}

Result<JudgedFleet> judge_payloads(const std::vector<std::optional<std::string>>& payloads,
                                   double waited_s) {
    std::error_code ec;
    const auto staging = fs::temp_directory_path(ec) / fmt::format("trainrig-fleet-{}", ::getpid());
    fs::remove_all(staging, ec);
    auto gathered = read_gathered(payloads, waited_s, staging.string());
    fs::remove_all(staging, ec);
    if (!gathered) return gathered.status();
    JudgedFleet out{judge_fleet(gathered->nodes), std::move(gathered).value()};
    return out;
}

}  // namespace trainrig::fleet
