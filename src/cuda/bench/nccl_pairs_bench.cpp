// nccl-pairs: the network between nodes, one pair of nodes at a time (docs/fleet.md, "Node
// pairs"). Under mpirun with one process per GPU on every node (`mpirun -npernode G`), each round
// of the schedule (measure/pair_schedule.h: every pair in n - 1 rounds, or TRAINRIG_PAIR_SAMPLE
// random pairs) runs an NCCL all-reduce over all the GPUs of both nodes of each pair, the pairs
// of a round at once. A pair below the others makes both nodes suspects; each suspect is then
// measured against a node known good, and the bad node is named. Rank 0 reports one record per
// pair measured, then the judgement. The method per pair is the nccl benchmark's (nccl-tests'
// busbw, slowest rank, outputs checked on the GPU).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/local_rank.h"
#include "cuda/bench/benchmarks.h"
#include "cuda/bench/nccl_world.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/nccl_comm.h"
#include "measure/collective_math.h"
#include "measure/node_placement.h"
#include "measure/pair_schedule.h"

#ifdef TRAINRIG_HAVE_MPI
#include <mpi.h>

#include "measure/mpi_agreement.h"
#endif

namespace trainrig::cuda {

#ifdef TRAINRIG_HAVE_MPI
namespace {

constexpr int kPairWarmup = 5;  // nccl-tests -w, as the nccl benchmark
constexpr bench::Collective kOp = bench::Collective::kAllReduce;

struct Placement {
    int rank = 0;  // in MPI_COMM_WORLD
    int node = 0;  // this process's node, 0..nodes-1 in rank order
    int nodes = 0;
    int local_rank = 0;              // on its node
    std::vector<std::string> hosts;  // every node's name, on world rank 0
};

// Which node each rank is on: every rank's host name, gathered to all of them, grouped by
// measure/node_placement.h (NCCL's own idea of a host; MPI_COMM_TYPE_SHARED would be the
// launcher's).
Placement place() {
    Placement p;
    MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    std::vector<char> all(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> names;
    for (int r = 0; r < size; ++r) {
        const char* name = all.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME;
        names.emplace_back(name, strnlen(name, MPI_MAX_PROCESSOR_NAME));
    }
    bench::NodePlacement where = bench::place_by_host_name(names, p.rank);
    p.node = where.node;
    p.nodes = where.nodes;
    p.local_rank = where.local_rank;
    if (p.rank == 0) p.hosts = std::move(where.hosts);
    return p;
}

// One pair's measurement as its first rank knows it; a = -1 on every other rank.
struct PairOutcome {
    double a = -1, b = -1;
    double busbw = 0;   // median of the samples, bytes/s
    double bad = 0;     // output floats that differ from the expected values, all ranks
    double failed = 0;  // 1 when the measurement could not be made
};

// One rank's part of a pair's all-reduce, phase by phase. Each phase returns this rank's
// outcome only; measure_pair has the ranks agree on it before the next.
class PairRun {
public:
    PairRun(const GpuInfo& gpu, size_t size, int prank, int psize)
        : gpu_(gpu),
          prank_(prank),
          psize_(psize),
          n_(bench::collective_counts(kOp, size, sizeof(float), psize)),
          bytes_(bench::collective_size_bytes(n_, sizeof(float))) {}

    size_t bytes() const { return bytes_; }
    // nccl-tests -n 20; fewer for the largest sizes, which run long enough on their own.
    int iters() const { return bytes_ > (size_t{256} << 20) ? 5 : 20; }

    Status join(const ncclUniqueId& id) {
        CUDA_TRY(cudaSetDevice(gpu_.index));
        return move_into(NcclComms::init(psize_, id, {{gpu_.index, prank_}}), comms_);
    }

    Status allocate() {
        TRAINRIG_TRY(move_into(make_stream(), stream_));
        TRAINRIG_TRY(move_into(device_alloc(n_.send_count * sizeof(float)), send_));
        TRAINRIG_TRY(move_into(device_alloc(n_.recv_count * sizeof(float)), recv_));
        TRAINRIG_TRY(move_into(device_alloc(sizeof(unsigned long long)), counter_));
        TRAINRIG_TRY(move_into(make_event(), start_));
        TRAINRIG_TRY(move_into(make_event(), stop_));
        TRAINRIG_TRY(fill_collective_input(static_cast<float*>(send_.get()), n_.send_count, prank_,
                                           stream_.get()));
        // NaN everywhere, so an output NCCL never wrote cannot pass.
        CUDA_TRY(cudaMemsetAsync(recv_.get(), 0xFF, n_.recv_count * sizeof(float), stream_.get()));
        return comms_.wait(stream_.get());
    }

    Status warm_up() {
        for (int k = 0; k < kPairWarmup; ++k) TRAINRIG_TRY(all_reduce());
        return comms_.wait(stream_.get());
    }

    // Seconds per operation, one value per sample.
    Status time(int samples, std::vector<double>& times) {
        for (int k = 0; k < samples; ++k) {
            CUDA_TRY(cudaEventRecord(start_.get(), stream_.get()));
            for (int i = 0; i < iters(); ++i) TRAINRIG_TRY(all_reduce());
            CUDA_TRY(cudaEventRecord(stop_.get(), stream_.get()));
            TRAINRIG_TRY(comms_.wait(stream_.get()));
            auto ms = elapsed_ms(start_.get(), stop_.get());
            if (!ms.ok()) return ms.status();
            times.push_back(*ms / 1e3 / iters());
        }
        return ok_status();
    }

    // This rank's output floats that differ from the expected values.
    Status check(double& bad) {
        auto* count = static_cast<unsigned long long*>(counter_.get());
        CUDA_TRY(cudaMemsetAsync(count, 0, sizeof *count, stream_.get()));
        TRAINRIG_TRY(count_collective_mismatches(static_cast<const float*>(recv_.get()),
                                                 n_.recv_count, kOp, psize_, prank_, n_.block,
                                                 count, stream_.get()));
        unsigned long long mine = 0;
        CUDA_TRY(cudaMemcpyAsync(&mine, count, sizeof mine, cudaMemcpyDeviceToHost, stream_.get()));
        TRAINRIG_TRY(comms_.wait(stream_.get()));
        bad = static_cast<double>(mine);
        return ok_status();
    }

    Status close() { return comms_.close(); }

private:
    Status all_reduce() {
        return comms_.settle(ncclAllReduce(send_.get(), recv_.get(), n_.send_count, ncclFloat,
                                           ncclSum, comms_[0], stream_.get()),
                             "ncclAllReduce");
    }

    const GpuInfo& gpu_;
    int prank_, psize_;
    bench::CollectiveCounts n_;
    size_t bytes_;
    Stream stream_;
    DeviceMemory send_, recv_, counter_;
    Event start_, stop_;
    // Last, so destroyed first: a communicator that was not closed is aborted, which stops its
    // kernels, before the buffers they use are freed.
    NcclComms comms_;
};

// The all-reduce over every rank of `pair` (the GPUs of both nodes): samples of back-to-back
// operations, the slowest rank's time per sample, then the outputs checked. After every phase
// the ranks agree whether all of them succeeded (measure/mpi_agreement.h), a rank that failed
// included, so they abandon the pair together at the same point and none waits in a collective
// the others skipped; every wait inside a phase is bounded (cuda/nccl_comm.h).
Result<PairOutcome> measure_pair(MPI_Comm pair, const GpuInfo& gpu, size_t size, int samples) {
    int prank = 0, psize = 0;
    MPI_Comm_rank(pair, &prank);
    MPI_Comm_size(pair, &psize);
    auto agreed = [pair](const Status& mine, std::string_view phase) {
        return bench::agree_over(pair, mine, phase);
    };
    ncclUniqueId id{};
    Status made;
    if (prank == 0)
        if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
            made = nccl_error(r, "ncclGetUniqueId", __FILE__, __LINE__);
    // Rank 0 sends even when it has no id: the others learn that from the agreement.
    if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, pair) != MPI_SUCCESS && made.ok())
        made = Status{Errc::kIo, "MPI_Bcast of a pair's NCCL unique id failed"};
    TRAINRIG_TRY(agreed(made, "the NCCL id"));

    PairRun run(gpu, size, prank, psize);
    TRAINRIG_TRY(agreed(run.join(id), "the communicator's set-up"));
    TRAINRIG_TRY(agreed(run.allocate(), "the allocation"));
    TRAINRIG_TRY(agreed(run.warm_up(), "the warm-up"));
    std::vector<double> times;
    TRAINRIG_TRY(agreed(run.time(samples, times), "the timed samples"));
    MPI_Allreduce(MPI_IN_PLACE, times.data(), samples, MPI_DOUBLE, MPI_MAX, pair);
    double bad = 0;
    TRAINRIG_TRY(agreed(run.check(bad), "the output check"));
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_DOUBLE, MPI_SUM, pair);
    TRAINRIG_TRY(agreed(run.close(), "closing the communicator"));

    std::vector<double> bw;
    for (const double t : times)
        bw.push_back(bench::busbw(kOp, psize, static_cast<double>(run.bytes()), t));
    std::nth_element(bw.begin(), bw.begin() + static_cast<long>(bw.size() / 2), bw.end());
    PairOutcome out;
    out.busbw = bw[bw.size() / 2];
    out.bad = bad;
    return out;
}

// Runs the rounds; world rank 0 gets every pair's outcome. Every rank takes part in every
// round's split and gather, so a pair that fails does not leave the others waiting.
std::vector<PairOutcome> run_rounds(const Placement& p, const std::vector<bench::Round>& rounds,
                                    const GpuInfo& gpu, size_t size, int samples,
                                    std::string& first_error) {
    std::vector<PairOutcome> all;
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    for (const auto& round : rounds) {
        int color = MPI_UNDEFINED;
        for (size_t i = 0; i < round.size(); ++i)
            if (round[i].first == p.node || round[i].second == p.node) color = static_cast<int>(i);
        MPI_Comm pair = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, color, p.rank, &pair);
        PairOutcome mine;
        if (pair != MPI_COMM_NULL) {
            int prank = 0;
            MPI_Comm_rank(pair, &prank);
            auto r = measure_pair(pair, gpu, size, samples);
            const auto& which = round[static_cast<size_t>(color)];
            if (prank == 0) {
                mine = r.ok() ? *r : PairOutcome{};
                mine.a = which.first;
                mine.b = which.second;
                mine.failed = r.ok() ? 0 : 1;
            }
            if (!r.ok() && first_error.empty()) first_error = r.status().message();
            MPI_Comm_free(&pair);
        }
        constexpr int kFields = 5;
        const double sent[kFields] = {mine.a, mine.b, mine.busbw, mine.bad, mine.failed};
        std::vector<double> gathered(p.rank == 0 ? static_cast<size_t>(world) * kFields : 0);
        MPI_Gather(sent, kFields, MPI_DOUBLE, gathered.data(), kFields, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
        for (size_t i = 0; i + kFields <= gathered.size(); i += kFields) {
            const double* f = gathered.data() + i;
            if (f[0] >= 0) all.push_back({f[0], f[1], f[2], f[3], f[4]});
        }
    }
    return all;
}

// Rank 0's retest schedule, sent to every rank as pairs of ints.
std::vector<bench::Round> share_rounds(const Placement& p, const std::vector<bench::Round>& r) {
    std::vector<int> flat;
    if (p.rank == 0)
        for (const auto& round : r) {
            flat.push_back(static_cast<int>(round.size()));
            for (const auto& [a, b] : round) flat.insert(flat.end(), {a, b});
        }
    int count = static_cast<int>(flat.size());
    MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
    flat.resize(static_cast<size_t>(count));
    MPI_Bcast(flat.data(), count, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<bench::Round> out;
    for (size_t i = 0; i < flat.size();) {
        bench::Round round(static_cast<size_t>(flat[i++]));
        for (auto& [a, b] : round) {
            a = flat[i++];
            b = flat[i++];
        }
        out.push_back(std::move(round));
    }
    return out;
}

GpuRecord pair_record(const Placement& p, const PairOutcome& o, size_t size, bool retest,
                      bool slow) {
    const auto a = static_cast<size_t>(o.a), b = static_cast<size_t>(o.b);
    GpuRecord rec;
    rec.bench = "nccl-pairs";
    rec.name = "all_reduce";
    rec.unit = "bytes/s";
    rec.samples = {o.busbw};
    rec.params = {{"op", "all_reduce"},
                  {"size_bytes", size},
                  {"dtype", "float32"},
                  {"metric", "busbw"},
                  {"nodes", {p.hosts[a], p.hosts[b]}},
                  {"retest", retest}};
    rec.target = {{"nodes", p.hosts[a] + "+" + p.hosts[b]}};
    rec.counted = {{"slow", slow}, {"failed", o.failed != 0}};
    rec.verified = o.failed == 0 && o.bad == 0;
    rec.verify_detail = o.failed != 0 ? "the measurement failed on this pair"
                        : o.bad == 0  ? "every rank's output equals the expected values"
                                      : fmt::format("{:.0f} output floats differ", o.bad);
    return rec;
}

int pair_sample() {
    const char* v = std::getenv("TRAINRIG_PAIR_SAMPLE");
    return v != nullptr ? std::max(0, std::atoi(v)) : 0;
}

}  // namespace

Status run_nccl_pairs_bench(const BenchContext& ctx, Records& out) {
    TRAINRIG_TRY(ensure_mpi());
    if (ctx.gpus.empty()) return Status{Errc::kUnsupported, "no GPU selected for this rank"};
    const Placement p = place();
    if (p.nodes < 2)
        return Status{Errc::kUnsupported, "nccl-pairs needs at least 2 nodes",
                      "run it under mpirun with one process per GPU on each node "
                      "(mpirun -npernode G --hostfile hosts trainrig bench run nccl-pairs)"};
    // The local rank among the ranks of its host name, mapped to a GPU by the shared rule.
    const GpuInfo& gpu = ctx.gpus[static_cast<size_t>(
        local_device(p.local_rank, static_cast<int>(ctx.gpus.size())))];
    const size_t size = ctx.sized<size_t>(size_t{1} << 30, size_t{64} << 20, size_t{4} << 20);
    const int samples = ctx.repeats_or(ctx.request.quick ? 3 : 5);
    const int k = pair_sample();
    const auto rounds =
        k > 0 ? bench::sampled_rounds(p.nodes, k, 1) : bench::all_pairs_rounds(p.nodes);

    out.reporting = p.rank == 0;  // rank 0 gets every pair's outcome (run_rounds)
    std::string error;
    const auto first = run_rounds(p, rounds, gpu, size, samples, error);
    std::vector<bench::PairResult> results;
    for (const auto& o : first)
        if (o.failed == 0)
            results.push_back({{static_cast<int>(o.a), static_cast<int>(o.b)}, o.busbw});
    const bench::PairJudgement judged =
        p.rank == 0 ? bench::judge_pairs(results) : bench::PairJudgement{};
    const auto retest = share_rounds(
        p, p.rank == 0 ? bench::retest_rounds(p.nodes, judged) : std::vector<bench::Round>{});
    const auto second = run_rounds(p, retest, gpu, size, samples, error);
    if (p.rank != 0) return error.empty() ? Status{} : Status{Errc::kIo, error};

    auto is_slow = [&](const PairOutcome& o) {
        return std::find(judged.slow.begin(), judged.slow.end(),
                         bench::NodePair{static_cast<int>(o.a), static_cast<int>(o.b)}) !=
               judged.slow.end();
    };
    for (const auto& o : first) out.push_back(pair_record(p, o, size, false, is_slow(o)).to_json());
    std::vector<bench::PairResult> retests;
    for (const auto& o : second) {
        const bool slow = o.failed == 0 && o.busbw < judged.threshold;
        out.push_back(pair_record(p, o, size, true, slow).to_json());
        if (o.failed == 0)
            retests.push_back({{static_cast<int>(o.a), static_cast<int>(o.b)}, o.busbw});
    }
    GpuRecord verdict;
    verdict.bench = "nccl-pairs";
    verdict.name = "bad_nodes";
    verdict.unit = "nodes";
    nlohmann::json blamed = nlohmann::json::array(), suspects = nlohmann::json::array();
    for (const int n : bench::blame(judged, retests))
        blamed.push_back(p.hosts[static_cast<size_t>(n)]);
    for (const int n : judged.suspects) suspects.push_back(p.hosts[static_cast<size_t>(n)]);
    verdict.samples = {static_cast<double>(blamed.size())};
    verdict.params = {
        {"nodes", p.nodes}, {"pairs", first.size()}, {"retests", second.size()}, {"sampled", k}};
    verdict.counted = {{"median_busbw", judged.median},
                       {"threshold_busbw", judged.threshold},
                       {"suspects", suspects},
                       {"blamed", blamed}};
    verdict.verified = error.empty();
    verdict.verify_detail = error.empty() ? "every pair measured" : "a pair failed: " + error;
    out.push_back(verdict.to_json());
    return error.empty() ? Status{} : Status{Errc::kIo, error};
}

#else

Status run_nccl_pairs_bench(const BenchContext&, Records&) {
    return Status{Errc::kUnsupported, "nccl-pairs needs MPI, and this plugin was built without it",
                  "install libopenmpi-dev and rebuild"};
}

#endif

}  // namespace trainrig::cuda
