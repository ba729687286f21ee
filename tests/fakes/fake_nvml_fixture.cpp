#include "fake_nvml_fixture.h"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include "fake_nvml_gpu_reader.h"
#include "fake_nvml_names.h"

namespace fake_nvml {
namespace {

using namespace trainrig::nvml;

std::string indexed(const std::string& path, size_t index) {
    return path + "[" + std::to_string(index) + "]";
}

const Json& array_member(const Json& value, const std::string& path) {
    if (!value.is_array()) fail(path, "expected an array");
    return value;
}

unsigned gpu_index(const Json& value, const std::string& path, size_t gpu_count) {
    const unsigned index = to_uint(value, path);
    if (index >= gpu_count) fail(path, "no such GPU in \"gpus\"");
    return index;
}

Hang read_hang(const Json& value, const std::string& path, size_t gpu_count) {
    ObjectReader reader(value, path);
    Hang hang;
    hang.function = reader.required("function", to_string);
    const auto device_call = names_device_call(hang.function);
    if (!device_call) fail(reader.path("function"), "not an NVML entry point the fake exports");
    if (const Json* gpu = reader.find("gpu")) {
        if (!*device_call) fail(reader.path("gpu"), "given for a call that concerns no GPU");
        hang.gpu = gpu_index(*gpu, reader.path("gpu"), gpu_count);
    }
    hang.seconds = reader.optional("seconds", to_seconds).value_or(hang.seconds);
    reader.reject_unknown();
    return hang;
}

int topology_level(const Json& value, const std::string& path) {
    static const std::pair<const char*, int> kLevels[] = {
        {"INTERNAL", kTopologyInternal}, {"SINGLE", kTopologySingle},
        {"MULTIPLE", kTopologyMultiple}, {"HOSTBRIDGE", kTopologyHostbridge},
        {"NODE", kTopologyNode},         {"SYSTEM", kTopologySystem},
    };
    const std::string name = to_string(value, path);
    for (const auto& [level_name, level] : kLevels)
        if (name == level_name) return level;
    fail(path, "expected INTERNAL, SINGLE, MULTIPLE, HOSTBRIDGE, NODE or SYSTEM");
}

std::vector<std::vector<int>> read_topology(const Json& value, const std::string& path,
                                            size_t gpu_count) {
    std::vector<std::vector<int>> rows;
    for (const auto& row_value : array_member(value, path)) {
        const std::string row_path = indexed(path, rows.size());
        if (rows.size() >= gpu_count) fail(row_path, "more rows than GPUs");
        auto& row = rows.emplace_back();
        for (const auto& level : array_member(row_value, row_path)) {
            if (row.size() >= gpu_count)
                fail(indexed(row_path, row.size()), "more columns than GPUs");
            row.push_back(topology_level(level, indexed(row_path, row.size())));
        }
    }
    return rows;
}

std::vector<XidEvent> read_events(const Json& value, const std::string& path, size_t gpu_count) {
    std::vector<XidEvent> events;
    for (const auto& event_value : array_member(value, path)) {
        ObjectReader reader(event_value, indexed(path, events.size()));
        XidEvent event;
        event.gpu = gpu_index(reader.get("gpu"), reader.path("gpu"), gpu_count);
        event.xid = reader.required("xid", to_uint64);
        reader.reject_unknown();
        events.push_back(event);
    }
    return events;
}

}  // namespace

Model parse_fixture(const Json& document) {
    ObjectReader reader(document, "");
    Model model;
    model.init = reader.optional("init", to_return_code).value_or(kSuccess);
    model.driver_version = reader.optional("driver_version", to_string);
    model.nvml_version = reader.optional("nvml_version", to_string);
    model.cuda_driver_version = reader.optional("cuda_driver_version", to_int);
    if (const Json* gpus = reader.find("gpus")) {
        for (const auto& gpu : array_member(*gpus, "gpus")) {
            const auto index = static_cast<unsigned>(model.gpus.size());
            model.gpus.push_back(read_gpu(gpu, indexed("gpus", index), index));
        }
    }
    const size_t count = model.gpus.size();
    if (const Json* hang = reader.find("hang")) model.hang = read_hang(*hang, "hang", count);
    if (const Json* topology = reader.find("topology"))
        model.topology = read_topology(*topology, "topology", count);
    if (const Json* events = reader.find("events"))
        model.events = read_events(*events, "events", count);
    reader.reject_unknown();
    return model;
}

Model load_fixture(const std::string& path) {
    std::ifstream file(path);
    if (!file) throw FixtureError("cannot open: " + std::generic_category().message(errno));
    std::stringstream text;
    text << file.rdbuf();
    Json document;
    try {
        document = Json::parse(text.str());
    } catch (const Json::exception& e) {
        throw FixtureError(e.what());
    }
    return parse_fixture(document);
}

}  // namespace fake_nvml
