// A CI-sized randomized fuzz run of the parsers: mutations of real-format samples plus random
// bytes, with a fixed seed so a failure reproduces. The libFuzzer harness runs the same target.
#include <gtest/gtest.h>

#include <random>

#include "../fuzz/fuzz_targets.h"

namespace trainrig {
namespace {

const char* kSeeds[] = {
    "6,1,10,-;NVRM: Xid (PCI:0000:41:00): 79, pid=2345, name=python3, GPU has fallen off the "
    "bus.\n SUBSYSTEM=pci\n",
    "3,9,99,-;pcieport 0000:00:03.1: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
    "(Receiver ID)\n",
    "0x00000000f1000000 0x00000000f1ffffff 0x0000000000040200\n0x0 0x0 0x0\n",
    "16.0 GT/s PCIe\n",
    "always [madvise] never\n",
    "Max open files            1024                 524288               files     \n",
    "MemTotal:       527999872 kB\n",
    "29 24 0:26 / /dev/shm rw,nosuid shared:4 - tmpfs tmpfs rw,size=65536k\n",
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n",
    "vm.swappiness = 1\n-kernel.sched_latency_ns=1\nexport NCCL_P2P_DISABLE=\"1\"\n",
};

TEST(ParsersFuzz, RandomAndMutatedInputsNeverCrash) {
    std::mt19937_64 rng(20261130);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int iter = 0; iter < 20000; ++iter) {
        std::string in = kSeeds[iter % std::size(kSeeds)];
        const int edits = 1 + int(rng() % 8);
        for (int e = 0; e < edits && !in.empty(); ++e) {
            size_t pos = rng() % in.size();
            switch (rng() % 5) {
                case 0:
                    in[pos] = static_cast<char>(byte(rng));
                    break;  // flip a byte
                case 1:
                    in.erase(pos, 1 + rng() % 8);
                    break;  // delete
                case 2:
                    in.insert(pos, 1, "\0\n;,: []x9"[rng() % 11]);
                    break;  // insert a delimiter
                case 3:
                    in.resize(pos);
                    break;  // truncate
                case 4:
                    in += in.substr(pos, 64);
                    break;  // duplicate
            }
        }
        if (iter % 10 == 0) {  // pure noise now and then
            in.resize(rng() % 256);
            for (auto& c : in) c = static_cast<char>(byte(rng));
        }
        ASSERT_NO_THROW(
            fuzz::parsers_one_input(reinterpret_cast<const uint8_t*>(in.data()), in.size()))
            << "iteration " << iter;
    }
}

}  // namespace
}  // namespace trainrig
