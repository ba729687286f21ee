// `trainrig train` as a user runs it: learning, the step log, exact resume, crashes during a
// save, divergence, and bad input.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include "background_process.h"
#include "train_cli_fixture.h"

namespace trainrig::test {
namespace {

TEST_F(TrainCliTest, LearnsThePatternAndLogsEveryPhase) {
    const std::string log = (dir_ / "log.jsonl").string();
    auto r = run_trainrig(
        args("--steps 60 --warmup 5 --val-data " + val_ + " --log " + log + " --json"));
    ASSERT_EQ(r.rc, 0) << r.err;
    const json s = json::parse(r.out);
    EXPECT_EQ(s["schema"], "trainrig.train.summary");
    EXPECT_EQ(s["stop"], "completed");
    EXPECT_EQ(s["end_step"], 60);
    // ln(128) = 4.85 at the start; the pattern's entropy is about 0.9·ln(1/0.9) + ... ≈ 0.8 nats.
    EXPECT_GT(s["first_val_loss"].get<double>(), 4.5);
    EXPECT_LT(s["last_val_loss"].get<double>(), 3.0);
    EXPECT_GT(s["tokens_per_s"].get<double>(), 0);
    EXPECT_TRUE(s["mfu"].is_null());  // no known peak for a CPU
    const auto lines = log_lines(log);
    ASSERT_EQ(lines.size(), 60u);
    for (size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i]["step"], i + 1);
        for (const char* key : {"loss", "lr", "tokens_per_s", "data_wait_s", "forward_s",
                                "backward_s", "comm_s", "optimizer_s", "step_s"})
            ASSERT_TRUE(lines[i][key].is_number()) << key << " in line " << i + 1;
    }
    // Warm-up then cosine decay to a tenth.
    EXPECT_NEAR(lines[0]["lr"].get<double>(), 3e-3 / 5, 1e-12);
    EXPECT_NEAR(lines[4]["lr"].get<double>(), 3e-3, 1e-12);
    EXPECT_NEAR(lines[59]["lr"].get<double>(), 3e-4, 1e-12);
    EXPECT_TRUE(lines[59].contains("val_loss"));
}

TEST_F(TrainCliTest, ResumeIsBitIdenticalToAStraightRun) { expect_exact_resume(); }

TEST_F(TrainCliTest, LlamaBlocksResumeBitIdenticallyToo) {
    shape_ = "--model llama-tiny --vocab 128";
    expect_exact_resume();
    const json state = json::parse(slurp(step_dir(ckpt("straight"), 8) + "/state.json"));
    EXPECT_EQ(state["model"]["arch"], "llama");
    EXPECT_EQ(state["model"]["kv_heads"], 2);
}

TEST_F(TrainCliTest, AModelConfigOrCheckpointThatDoesNotFitIsOneSentence) {
    const fs::path config = dir_ / "config.json";
    std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 32,
        "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 64,
        "num_hidden_layers": 1, "vocab_size": 128})";
    shape_ = "--model-config " + config.string();
    auto r = run_trainrig(args("--steps 1"));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("key/value heads"), std::string::npos) << r.err;
    std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 32,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 64,
        "num_hidden_layers": 1, "vocab_size": 128})";
    std::ofstream(dir_ / "model.safetensors") << "not a checkpoint";
    const std::string out = ckpt("never");
    r = run_trainrig(args("--steps 1 --init-from " + (dir_ / "model.safetensors").string() +
                          " --ckpt-dir " + out));
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("is not a valid safetensors file"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(step_dir(out, 1)));
    r = run_trainrig(args("--steps 1 --model tiny"));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--model-config and --model"), std::string::npos) << r.err;
}

TEST_F(TrainCliTest, ResumingAFinishedRunReportsWhereItEnded) {
    const std::string dir = ckpt("done");
    auto first = run_trainrig(args("--steps 3 --json --ckpt-dir " + dir));
    ASSERT_EQ(first.rc, 0) << first.err;
    const json ran = json::parse(first.out);
    auto r = run_trainrig(args("--steps 3 --resume --json --ckpt-dir " + dir));
    ASSERT_EQ(r.rc, 0) << r.err;
    const json again = json::parse(r.out);
    EXPECT_EQ(again["stop"], "nothing_to_do");
    EXPECT_EQ(again["end_step"], 3);
    EXPECT_EQ(again["last_loss"], ran["last_loss"]);  // not an all-zero summary
    EXPECT_EQ(again["last_val_loss"], ran["last_val_loss"]);
    EXPECT_EQ(again["last_checkpoint"], step_dir(dir, 3));
    EXPECT_NE(again["message"].get<std::string>().find("--extend"), std::string::npos);
}

// The text summary is for people: how the run ended in words (the JSON keeps the enum words),
// and a run that took no step shows no zero throughput or memory as if measured.
TEST_F(TrainCliTest, TheSummarySaysHowTheRunEndedInWords) {
    const std::string dir = ckpt("words");
    auto first = run_trainrig(args("--steps 8 --stop-at 4 --ckpt-dir " + dir));
    ASSERT_EQ(first.rc, 0) << first.err;
    const std::string header = first.out.substr(0, first.out.find('\n'));
    EXPECT_NE(header.find("stopped at step 4 of 8 (--stop-at)"), std::string::npos) << header;
    EXPECT_EQ(header.find('_'), std::string::npos) << header;
    auto again = run_trainrig(args("--steps 8 --stop-at 4 --resume --ckpt-dir " + dir));
    ASSERT_EQ(again.rc, 0) << again.err;
    const std::string out = again.out;
    EXPECT_EQ(out.rfind("trainrig train: nothing to do (", 0), 0u) << out;
    for (const char* word : {"nothing_to_do", "stopped_at", "non_finite"})
        EXPECT_EQ(out.find(word), std::string::npos) << word << "\n" << out;
    EXPECT_NE(out.find("no step ran"), std::string::npos) << out;
    for (const char* measured : {"0 tokens/s", "throughput", "phases", "memory", "compute"})
        EXPECT_EQ(out.find(measured), std::string::npos) << measured << "\n" << out;
    auto json_again = run_trainrig(args("--steps 8 --stop-at 4 --resume --json --ckpt-dir " + dir));
    ASSERT_EQ(json_again.rc, 0) << json_again.err;
    EXPECT_EQ(json::parse(json_again.out)["stop"], "nothing_to_do");
}

// An unknown model names each known one once; a model whose state alone does not fit is not
// told to lower --batch.
TEST_F(TrainCliTest, UnknownAndTooLargeModelsGetTheRightAdvice) {
    shape_ = "--model nosuch";
    auto r = run_trainrig(args("--steps 1"));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("unknown model 'nosuch'"), std::string::npos) << r.err;
    for (const char* name : {"gpt2,", "gpt2-medium", "gpt2-xl", "llama3-8b"}) {
        const size_t first = r.err.find(name);
        EXPECT_NE(first, std::string::npos) << name << "\n" << r.err;
        EXPECT_EQ(r.err.find(name, first + 1), std::string::npos) << name << "\n" << r.err;
    }
    // 70 B parameters: weights, gradients and AdamW state are about a terabyte.
    shape_ = "--model llama3-70b";
    r = run_trainrig(args("--steps 1 --batch 1"));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("for its weights, gradients and AdamW state alone"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("no batch fits"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("trainrig plan --model llama3-70b"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("--grad-accum"), std::string::npos) << r.err;
}

TEST_F(TrainCliTest, AResumeKeepsItsScheduleUnlessExtended) {
    const std::string dir = ckpt("schedule");
    ASSERT_EQ(run_trainrig(args("--steps 4 --stop-at 2 --ckpt-dir " + dir)).rc, 0);
    // A different --steps or --lr would restart the learning-rate schedule mid-run.
    for (const auto& [flags, said] : std::vector<std::pair<std::string, std::string>>{
             {"--steps 6", "--steps 6 differs from the checkpoint's 4"},
             {"--steps 4 --lr 1e-3", "--lr 0.001 differs from the checkpoint's 0.003"},
             {"--steps 4 --warmup 1", "--warmup 1 differs from the checkpoint's 0"}}) {
        auto r = run_trainrig(args(flags + " --resume --ckpt-dir " + dir));
        EXPECT_EQ(r.rc, 2) << flags << "\n" << r.err;
        EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(step_dir(dir, 2)), std::string::npos) << r.err;
    }
    // --extend continues to the larger --steps.
    auto r = run_trainrig(args("--steps 6 --resume --extend --json --ckpt-dir " + dir));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["end_step"], 6);
    EXPECT_EQ(run_trainrig(args("--steps 6 --extend --ckpt-dir " + dir)).rc, 2);
}

TEST_F(TrainCliTest, AKillAtAnyPointOfASaveKeepsThePreviousCheckpoint) {
    const std::string straight = ckpt("straight");
    ASSERT_EQ(run_trainrig(args("--steps 6 --ckpt-dir " + straight)).rc, 0);
    for (const char* point : {"files", "renamed"}) {
        const std::string dir = ckpt(std::string("crash-") + point);
        auto killed = run_trainrig(args("--steps 6 --ckpt-every 2 --ckpt-dir " + dir),
                                   std::string("TRAINRIG_TRAIN_CRASH_IN_SAVE=") + point + "@4");
        ASSERT_NE(killed.rc, 0) << point;
        ASSERT_NE(killed.rc, 2) << point << ": " << killed.err;
        ASSERT_TRUE(fs::exists(step_dir(dir, 2) + "/COMMITTED")) << point;
        auto r = run_trainrig(args("--steps 6 --resume --json --ckpt-dir " + dir));
        ASSERT_EQ(r.rc, 0) << point << ": " << r.err;
        EXPECT_EQ(json::parse(r.out)["resumed_from"], step_dir(dir, 2)) << point;
        EXPECT_TRUE(
            same_bytes(step_dir(straight, 6) + "/model.bin", step_dir(dir, 6) + "/model.bin"))
            << point;
        // The interrupted save's leftovers are gone.
        for (const auto& e : fs::directory_iterator(dir)) {
            const std::string name = e.path().filename().string();
            EXPECT_TRUE(name == ".lock" || fs::exists(e.path() / "COMMITTED")) << name;
        }
    }
}

TEST_F(TrainCliTest, KillsAtRandomMomentsNeverCostMoreThanTheLastStep) {
    const std::string straight = ckpt("straight");
    const std::string common = "--steps 40 --ckpt-every 1 --keep 2 --dim 64 --seq 64 --ckpt-dir ";
    ASSERT_EQ(run_trainrig(args(common + straight)).rc, 0);
    const std::string dir = ckpt("killed");
    std::mt19937 gen(std::random_device{}());
    for (int round = 0; round < 3; ++round) {
        std::vector<std::string> argv = {TRAINRIG_BINARY};
        std::istringstream words(args(common + dir + (round > 0 ? " --resume" : "")));
        for (std::string w; words >> w;) argv.push_back(w);
        BackgroundProcess p(argv, {}, (dir_ / "out").string(), (dir_ / "err").string());
        ASSERT_TRUE(p.started());
        std::this_thread::sleep_for(std::chrono::milliseconds(100 + gen() % 400));
        if (!p.running()) break;  // finished before the kill
        p.stop(SIGKILL, 10);
    }
    auto r = run_trainrig(args(common + dir + " --resume --json"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(
        same_bytes(step_dir(straight, 40) + "/model.bin", step_dir(dir, 40) + "/model.bin"));
}

TEST_F(TrainCliTest, ANonFiniteLossStopsTheRunAndNamesTheLastGoodCheckpoint) {
    const std::string dir = ckpt("nan");
    auto r =
        run_trainrig(args("--steps 10 --lr 1e30 --grad-clip 0 --ckpt-every 1 --ckpt-dir " + dir));
    ASSERT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("not updated"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("The last good checkpoint is " + step_dir(dir, 1)), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(step_dir(dir, 2)));
}

TEST_F(TrainCliTest, ACheckpointOfAnotherShapeIsRefused) {
    const std::string dir = ckpt("shape");
    ASSERT_EQ(run_trainrig(args("--steps 2 --ckpt-dir " + dir)).rc, 0);
    auto r = run_trainrig(args("--steps 4 --resume --dim 64 --ckpt-dir " + dir));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("different model"), std::string::npos) << r.err;
}

TEST_F(TrainCliTest, BadInputGetsOneSentenceAndWritesNothing) {
    const std::string dir = ckpt("bad");
    struct Case {
        std::string extra, expect;
    };
    const std::string to = " --ckpt-dir " + dir;
    const std::vector<Case> cases = {
        {"--steps 2 --lr -1" + to, "--lr must be a positive number"},
        {"--steps 2 --seq 2000" + to, "--seq 2000 is outside 1..1024"},
        {"--steps 2 --batch 0" + to, "--batch must be at least 1"},
        {"--steps 0" + to, "--steps must be at least 1"},
        {"--steps 2 --resume", "--resume needs --ckpt-dir"},
        {"--steps 2 --heads 3" + to, "dim 32 is not a multiple of heads 3"},
        {"--steps 2 --model gpt2" + to, "--model and --layers/--heads/--dim are alternatives"},
        {"--steps 2 --batch 100000 --seq 1024 --dim 4096" + to, "of memory"},
    };
    for (const Case& c : cases) {
        auto r = run_trainrig(args(c.extra));
        EXPECT_EQ(r.rc, 2) << c.extra;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.extra << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(fs::exists(dir)) << c.extra;
    }
}

TEST_F(TrainCliTest, BadDataIsNamed) {
    // Tokens up to 95 do not fit a 64-token vocabulary.
    auto r = run_trainrig(args("--steps 2 --vocab 64"));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("outside the model's vocabulary of 64"), std::string::npos) << r.err;
    // A missing dataset, and one whose .bin was cut short.
    r = run_trainrig("train --data " + (dir_ / "nothing").string() + " --steps 2 --no-progress");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("nothing"), std::string::npos) << r.err;
    fs::resize_file(train_ + ".bin", fs::file_size(train_ + ".bin") / 2);
    r = run_trainrig(args("--steps 2"));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("train.bin"), std::string::npos) << r.err;
}

// Data parallel over MPI: two ranks of batch B are one rank of batch 2B, up to fp32 summation
// order, and both ranks end with bit-identical weights.
TEST_F(TrainCliTest, TwoMpiRanksEqualOneRankWithTheDoubledBatch) {
    shape_ += " --threads 1";
    const auto [one, two] = expect_two_ranks_equal_one(6, 1e-5, 1e-4f);
    EXPECT_EQ(one.value("communicator", json()), "local");
    EXPECT_EQ(two.value("communicator", json()), "mpi");
}

}  // namespace
}  // namespace trainrig::test
