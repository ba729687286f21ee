// `trainrig slurm healthcheck` and `trainrig npd` on the same machine tree: one judgement, so one
// count of checks in the same words, and a dry run that says what it would do, once.
#include <gtest/gtest.h>

#include <string>

#include "../unit/temp_dir_test.h"
#include "run_binary.h"

namespace trainrig::test {
namespace {

class HealthCli : public TempDirTest {
protected:
    // An empty folder: no validate report, the same for both commands.
    std::string common() const {
        return " --root " + fixture("cpu-only") + " --report " + dir_.string();
    }
};

TEST_F(HealthCli, SlurmAndNpdCountTheChecksInTheSameWords) {
    auto npd = run_trainrig("npd" + common());
    ASSERT_EQ(npd.rc, 0) << npd.out << npd.err;
    ASSERT_EQ(npd.out.rfind("ok: ", 0), 0u) << npd.out;
    const std::string counted = npd.out.substr(4, npd.out.find('\n') - 4);
    EXPECT_NE(counted.find("not applicable"), std::string::npos) << counted;

    // No scontrol to ask: a dry run assumes the node is not drained.
    auto slurm = run_trainrig("slurm healthcheck --dry-run --node node07 --scontrol " +
                              (dir_ / "no-scontrol").string() + common());
    ASSERT_EQ(slurm.rc, 0) << slurm.out << slurm.err;
    EXPECT_EQ(slurm.out, "node07: healthy (" + counted + ")\n");
}

}  // namespace
}  // namespace trainrig::test
