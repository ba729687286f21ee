// Following a kernel log file, the deadline worker, and --listen addresses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "temp_dir_test.h"
#include "watch/deadline_worker.h"
#include "watch/kernel_events.h"
#include "watch/metrics_server.h"
#include "watch/watch_view.h"

namespace trainrig::watch {
namespace {

namespace fs = std::filesystem;

class KmsgFile : public test::TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        path_ = (dir_ / "kmsg").string();
        std::ofstream(path_).close();
    }
    void append(const std::string& text) {
        std::ofstream f(path_, std::ios::app);
        f << text;
    }
    std::string path_;
};

const char* kXid79 =
    "3,242,183522117311,-;NVRM: Xid (PCI:0000:41:00): 79, pid=2345, name=python3, GPU has fallen "
    "off the bus.\n";

TEST_F(KmsgFile, FindsEventsAndSkipsTheRest) {
    append("6,240,1000,-;Linux version 6.1\n");
    append(
        "4,241,2000,-;pcieport 0000:00:03.1: AER: PCIe Bus Error: severity=Corrected, "
        "type=Physical Layer\n SUBSYSTEM=pci\n");
    append(kXid79);
    append("garbage without a header\n");
    auto f = KmsgFollower::open_file(path_);
    ASSERT_TRUE(f) << f.status().message();
    std::vector<KernelEvent> ev;
    ASSERT_TRUE(f.value().poll(ev).ok());
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].kind, KernelEvent::Kind::kAerCorrected);
    EXPECT_EQ(ev[0].device, "0000:00:03.1");
    EXPECT_EQ(ev[1].kind, KernelEvent::Kind::kXid);
    EXPECT_EQ(ev[1].xid, 79);
    EXPECT_EQ(ev[1].seq, 242u);
    EXPECT_EQ(ev[1].usec, 183522117311u);
    EXPECT_EQ(f.value().records(), 3u);
    EXPECT_EQ(f.value().malformed(), 1u);
    EXPECT_EQ(f.value().last_seq(), 242u);
}

TEST_F(KmsgFile, FollowsGrowthAndWaitsForWholeLines) {
    auto f = KmsgFollower::open_file(path_);
    ASSERT_TRUE(f);
    std::vector<KernelEvent> ev;
    ASSERT_TRUE(f.value().poll(ev).ok());
    EXPECT_TRUE(ev.empty());
    const std::string line = kXid79;
    append(line.substr(0, 30));  // half a record: not yet
    ASSERT_TRUE(f.value().poll(ev).ok());
    EXPECT_TRUE(ev.empty());
    append(line.substr(30));
    ASSERT_TRUE(f.value().poll(ev).ok());
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].xid, 79);
    ASSERT_TRUE(f.value().poll(ev).ok());  // nothing new
    EXPECT_EQ(ev.size(), 1u);
}

TEST_F(KmsgFile, GapsInSequenceNumbersCountAsLost) {
    append("6,10,1,-;a\n6,11,2,-;b\n6,15,3,-;c\n");
    auto f = KmsgFollower::open_file(path_);
    ASSERT_TRUE(f);
    std::vector<KernelEvent> ev;
    ASSERT_TRUE(f.value().poll(ev).ok());
    EXPECT_EQ(f.value().lost(), 3u);
    EXPECT_EQ(f.value().records(), 3u);
}

TEST_F(KmsgFile, ResumeSkipsWhatAnEarlierRunRead) {
    append("6,240,1,-;a\n");
    append(kXid79);  // seq 242: a gap of one
    auto f = KmsgFollower::open_file(path_);
    ASSERT_TRUE(f);
    f.value().resume_after(242);
    std::vector<KernelEvent> ev;
    ASSERT_TRUE(f.value().poll(ev).ok());
    EXPECT_TRUE(ev.empty());
    EXPECT_EQ(f.value().records(), 0u);
    append("3,243,2,-;NVRM: Xid (PCI:0000:41:00): 48, pid=1, DBE\n");
    ASSERT_TRUE(f.value().poll(ev).ok());
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].xid, 48);
}

TEST_F(KmsgFile, TruncatedOrReplacedFileIsReadAgainWithoutRepeats) {
    append("6,1,1,-;a\n");
    append(kXid79);
    auto f = KmsgFollower::open_file(path_);
    ASSERT_TRUE(f);
    std::vector<KernelEvent> ev;
    ASSERT_TRUE(f.value().poll(ev).ok());
    ASSERT_EQ(ev.size(), 1u);
    // Truncated and rewritten with the old records and one new.
    std::ofstream(path_, std::ios::trunc) << "3,243,5,-;NVRM: Xid (PCI:0000:41:00): 13, pid=1\n";
    ASSERT_TRUE(f.value().poll(ev).ok());
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[1].xid, 13);
    // Replaced by a new file (rotation): followed from its start.
    const std::string next = path_ + ".new";
    std::ofstream(next) << kXid79 << "3,300,9,-;NVRM: Xid (PCI:0000:41:00): 31, pid=1\n";
    fs::rename(next, path_);
    ASSERT_TRUE(f.value().poll(ev).ok());
    ASSERT_EQ(ev.size(), 3u);
    EXPECT_EQ(ev[2].xid, 31);
}

TEST_F(KmsgFile, MissingFileIsAnErrorNamingIt) {
    auto f = KmsgFollower::open_file((dir_ / "absent").string());
    ASSERT_FALSE(f);
    EXPECT_NE(f.status().message().find("absent"), std::string::npos);
}

TEST(KernelEventScan, AllKinds) {
    KernelEvent e;
    ASSERT_TRUE(scan_kernel_event("NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.", e));
    EXPECT_EQ(e.kind, KernelEvent::Kind::kFallenOffBus);
    EXPECT_EQ(e.device, "0000:41:00.0");
    ASSERT_TRUE(scan_kernel_event(
        "nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer",
        e));
    EXPECT_EQ(e.kind, KernelEvent::Kind::kAerFatal);
    EXPECT_FALSE(scan_kernel_event("NVRM: loading NVIDIA UNIX x86_64 Kernel Module", e));
}

TEST(GpuForDevice, MatchesTheKernelsAddressForm) {
    const std::vector<GpuIdentity> gpus = {{0, "u0", "n", "0000:41:00.0"},
                                           {1, "u1", "n", "0000:c1:00.0"}};
    EXPECT_EQ(gpu_for_device(gpus, "0000:41:00"), 0);
    EXPECT_EQ(gpu_for_device(gpus, "0000:C1:00"), 1);
    EXPECT_EQ(gpu_for_device(gpus, "0000:c1:00.0"), 1);
    EXPECT_EQ(gpu_for_device(gpus, "0000:c1:0"), -1);  // not a whole address
    EXPECT_EQ(gpu_for_device(gpus, "0000:99:00"), -1);
    EXPECT_EQ(gpu_for_device(gpus, ""), -1);
}

TEST(DeadlineWorker, OverrunIsReportedAndTheWorkerStaysBusy) {
    std::atomic<bool> release{false};
    DeadlineWorker w;
    ASSERT_TRUE(w.start([&](std::atomic<const char*>& step) {
        step = "nvmlDeviceGetTemperature";
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }));
    EXPECT_FALSE(w.wait_until(DeadlineWorker::Clock::now() + std::chrono::milliseconds(20)));
    EXPECT_TRUE(w.busy());
    EXPECT_STREQ(w.step(), "nvmlDeviceGetTemperature");
    EXPECT_FALSE(w.start([](std::atomic<const char*>&) {}));  // still running
    release = true;
    EXPECT_TRUE(w.wait_until(DeadlineWorker::Clock::now() + std::chrono::seconds(10)));
    int ran = 0;
    ASSERT_TRUE(w.start([&](std::atomic<const char*>&) { ran = 1; }));
    ASSERT_TRUE(w.wait_until(DeadlineWorker::Clock::now() + std::chrono::seconds(10)));
    EXPECT_EQ(ran, 1);
}

TEST(DeadlineWorker, AbandonsAJobThatNeverReturns) {
    auto gate = std::make_shared<std::atomic<bool>>(false);
    {
        DeadlineWorker w;
        ASSERT_TRUE(w.start([gate](std::atomic<const char*>&) {
            while (!*gate) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }));
    }  // must not block here
    *gate = true;
}

TEST(ListenAddress, Forms) {
    auto a = parse_listen_address("127.0.0.1:9402");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 9402);
    auto v6 = parse_listen_address("[::1]:0");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->port, 0);
    EXPECT_FALSE(parse_listen_address("9402"));
    EXPECT_FALSE(parse_listen_address("host:99999"));
    EXPECT_FALSE(parse_listen_address("host:abc"));
    EXPECT_FALSE(parse_listen_address("[::1]9402"));
}

}  // namespace
}  // namespace trainrig::watch
