#include "data/tokenize/tokenize_pipeline.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "data/tokenize/byte_source.h"

namespace trainrig::data {
namespace {

struct Batch {
    uint64_t seq = 0;
    size_t file = 0;
    uint64_t first_line = 0;  // 1-based line number of the first record
    std::string data;         // records, each followed by '\n'; padded for simdjson
    std::vector<std::pair<size_t, size_t>> records;  // (offset, length)
    uint64_t file_position = 0;
};

struct Encoded {
    uint64_t seq = 0;
    std::vector<uint32_t> ids;
    std::vector<uint64_t> lengths;  // per document
    uint64_t records = 0, skipped = 0, text_bytes = 0, input_bytes = 0, file_position = 0;
    std::vector<SkippedRecord> skips;
    Status error;
};

// A blocking queue; close() wakes every waiter and makes pop() return nullopt once empty.
template <class T>
class Channel {
public:
    void push(T v) {
        {
            std::lock_guard lock(mu_);
            items_.push_back(std::move(v));
        }
        cv_.notify_one();
    }
    std::optional<T> pop() {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !items_.empty() || closed_; });
        if (items_.empty()) return std::nullopt;
        T v = std::move(items_.front());
        items_.pop_front();
        return v;
    }
    void close() {
        {
            std::lock_guard lock(mu_);
            closed_ = true;
        }
        cv_.notify_all();
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<T> items_;
    bool closed_ = false;
};

// Limits batches between the reader and the writer.
class Slots {
public:
    explicit Slots(size_t n) : free_(n) {}
    // False when `stop()` turns true first. The timed wait also catches a stop set from a
    // signal handler, which cannot notify.
    template <class Stop>
    bool acquire(const Stop& stop) {
        std::unique_lock lock(mu_);
        while (free_ == 0 && !stop()) cv_.wait_for(lock, std::chrono::milliseconds(100));
        if (stop()) return false;
        --free_;
        return true;
    }
    void release() {
        {
            std::lock_guard lock(mu_);
            ++free_;
        }
        cv_.notify_one();
    }
    void wake_all() {
        { std::lock_guard lock(mu_); }  // a waiter is either before its check or asleep
        cv_.notify_all();
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    size_t free_;
};

class Pipeline {
public:
    Pipeline(const Tokenizer& t, const TokenizeOptions& o, ShardWriter& w)
        : tokenizer_(t), options_(o), writer_(w), slots_(2 * o.workers + 2) {}

    Result<TokenizeStats> run(const ProgressFn& progress);

private:
    void read_all();
    Status read_file(size_t index, uint64_t& seq);
    void emit(Batch& b, uint64_t& seq);
    void work();
    void encode_batch(Batch& b, Encoded& out, DocumentExtractor& ex, TokenEncoder& enc);
    void fail(Status s);
    // Stops whatever still runs (nothing once the writer has drained the input) and joins.
    void join_all() {
        if (threads_.empty()) return;
        bool drained;
        {
            std::lock_guard lock(done_mu_);
            drained = reader_finished_ && done_.empty();
        }
        if (!drained) stop_ = true;
        slots_.wake_all();
        batches_.close();
        for (auto& t : threads_) t.join();
        threads_.clear();
    }
    bool stopping() const {
        return stop_.load() || (options_.cancel != nullptr && options_.cancel->load());
    }

    const Tokenizer& tokenizer_;
    const TokenizeOptions& options_;
    ShardWriter& writer_;
    Slots slots_;
    Channel<Batch> batches_;
    std::mutex done_mu_;
    std::condition_variable done_cv_;
    std::map<uint64_t, Encoded> done_;
    bool reader_finished_ = false;
    uint64_t batches_total_ = 0;
    std::vector<uint64_t> file_sizes_;
    uint64_t files_before_ = 0;  // reader thread only
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
    std::mutex error_mu_;
    Status error_;
};

void Pipeline::fail(Status s) {
    {
        std::lock_guard lock(error_mu_);
        if (error_.ok()) error_ = std::move(s);
    }
    stop_ = true;
    slots_.wake_all();
    done_cv_.notify_all();
}

void Pipeline::emit(Batch& b, uint64_t& seq) {
    b.seq = seq++;
    b.data.append(DocumentExtractor::kJsonPadding, '\0');
    batches_.push(std::move(b));
}

Status Pipeline::read_file(size_t index, uint64_t& seq) {
    auto source = open_byte_source(options_.inputs[index]);
    if (!source) return source.status();
    ByteSource& in = **source;
    const bool whole_file = options_.format == InputFormat::kText;
    std::string pending;  // bytes after the last complete line
    size_t last_newline = std::string::npos;
    uint64_t line = 1;
    std::vector<char> buf(std::min<size_t>(options_.batch_bytes, 1 << 20));
    bool eof = false;
    while (!eof) {
        if (stopping()) return ok_status();
        auto got = in.read(buf.data(), buf.size());
        if (!got) return got.status();
        eof = *got == 0;
        pending.append(buf.data(), *got);
        // After each cut `pending` holds no newline, so the last one is in the bytes just read.
        if (const void* nl = ::memrchr(pending.data() + pending.size() - *got, '\n', *got))
            last_newline = static_cast<size_t>(static_cast<const char*>(nl) - pending.data());
        if (whole_file && !eof) continue;
        if (!eof && pending.size() < options_.batch_bytes) continue;
        // Cut a batch after the last newline (or take everything at the end of the file).
        if (!eof && last_newline == std::string::npos) continue;  // a line longer than a batch
        const size_t cut = eof ? pending.size() : last_newline + 1;
        last_newline = std::string::npos;
        if (cut == 0) continue;
        if (!slots_.acquire([this] { return stopping(); })) return ok_status();
        Batch b;
        b.file = index;
        b.first_line = line;
        b.file_position = files_before_ + in.file_position();
        if (whole_file) {
            b.data = std::move(pending);
            b.records.emplace_back(0, b.data.size());
            pending.clear();
            ++line;
        } else {
            b.data.assign(pending, 0, cut);
            pending.erase(0, cut);
            size_t at = 0;
            while (at < b.data.size()) {
                size_t nl = b.data.find('\n', at);
                if (nl == std::string::npos) nl = b.data.size();
                size_t len = nl - at;
                if (len > 0 && b.data[at + len - 1] == '\r') --len;
                b.records.emplace_back(at, len);
                at = nl + 1;
                ++line;
            }
        }
        emit(b, seq);
    }
    return ok_status();
}

void Pipeline::read_all() {
    uint64_t seq = 0;
    Status error;
    for (size_t i = 0; i < options_.inputs.size() && !stopping(); ++i) {
        error = read_file(i, seq);
        if (!error.ok()) break;
        files_before_ += file_sizes_[i];
    }
    batches_.close();
    std::lock_guard lock(done_mu_);
    if (!error.ok()) {
        // Reported by the writer in input order, after every batch read before it.
        Encoded e;
        e.seq = seq;
        e.error = std::move(error);
        done_.emplace(seq++, std::move(e));
    }
    reader_finished_ = true;
    batches_total_ = seq;
    done_cv_.notify_all();
}

void Pipeline::encode_batch(Batch& b, Encoded& out, DocumentExtractor& ex, TokenEncoder& enc) {
    out.seq = b.seq;
    out.input_bytes = b.data.size() - DocumentExtractor::kJsonPadding;
    out.file_position = b.file_position;
    std::string storage;
    const std::optional<uint32_t> eod = tokenizer_.eod();
    for (size_t r = 0; r < b.records.size(); ++r) {
        const auto [offset, length] = b.records[r];
        const std::string_view record(b.data.data() + offset, length);
        if (r % 256 == 0 && stopping()) return;  // the output is abandoned anyway
        ++out.records;
        // Blank lines separate nothing in JSONL and are not documents in line mode.
        if (options_.format != InputFormat::kText &&
            record.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        auto text = ex.extract(record, storage);
        const auto where = [&] {
            return options_.format == InputFormat::kText
                       ? options_.inputs[b.file]
                       : fmt::format("{} line {}", options_.inputs[b.file], b.first_line + r);
        };
        if (!text) {
            if (options_.on_error == OnError::kFail) {
                out.error = Status{Errc::kInvalidInput,
                                   fmt::format("{} {}", where(), text.status().message()),
                                   "fix or remove the record, or pass --on-error skip"};
                return;
            }
            ++out.skipped;
            if (out.skips.size() < 10) out.skips.push_back({where(), text.status().message()});
            continue;
        }
        const size_t before = out.ids.size();
        if (auto s = enc.encode(*text, out.ids); !s.ok()) {
            if (options_.on_error == OnError::kFail) {
                out.error = Status{s.code(), fmt::format("{}: {}", where(), s.message())};
                return;
            }
            out.ids.resize(before);
            ++out.skipped;
            if (out.skips.size() < 10) out.skips.push_back({where(), s.message()});
            continue;
        }
        if (options_.append_eod) out.ids.push_back(*eod);
        out.lengths.push_back(out.ids.size() - before);
        out.text_bytes += text->size();
    }
}

void Pipeline::work() {
    DocumentExtractor ex(options_.format, options_.text);
    auto enc = tokenizer_.encoder(options_.allow_special);
    while (auto b = batches_.pop()) {
        if (stopping()) {
            slots_.release();
            continue;
        }
        Encoded out;
        encode_batch(*b, out, ex, *enc);
        {
            std::lock_guard lock(done_mu_);
            done_.emplace(out.seq, std::move(out));
        }
        done_cv_.notify_all();
    }
}

Result<TokenizeStats> Pipeline::run(const ProgressFn& progress) {
    if (options_.append_eod && !tokenizer_.eod())
        return Status{Errc::kInvalidInput,
                      "--append-eod was given, but the tokenizer has no end-of-document token"};
    TokenizeStats stats;
    for (const auto& path : options_.inputs) {
        auto s = open_byte_source(path);
        if (!s) return s.status();
        stats.file_bytes_total += (*s)->file_size();
        file_sizes_.push_back((*s)->file_size());
    }
    const auto start = std::chrono::steady_clock::now();
    auto last_progress = start;
    // Joined on every way out, exceptions included (a failed thread start, bad_alloc).
    struct Joiner {
        Pipeline& p;
        ~Joiner() { p.join_all(); }
    } joiner{*this};
    threads_.emplace_back([this] { read_all(); });
    for (unsigned i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { work(); });

    uint64_t next = 0;
    for (;;) {
        std::optional<Encoded> e;
        {
            std::unique_lock lock(done_mu_);
            done_cv_.wait_for(lock, std::chrono::milliseconds(200), [&] {
                return done_.count(next) > 0 || stopping() ||
                       (reader_finished_ && next == batches_total_);
            });
            if (auto it = done_.find(next); it != done_.end()) {
                e = std::move(it->second);
                done_.erase(it);
            } else if (stopping() || (reader_finished_ && next == batches_total_)) {
                break;
            }
        }
        if (!e) continue;
        ++next;
        slots_.release();
        if (!e->error.ok()) {
            fail(std::move(e->error));
            break;
        }
        size_t at = 0;
        for (const uint64_t len : e->lengths) {
            if (auto s = writer_.add_document(std::span<const uint32_t>(e->ids.data() + at, len));
                !s.ok()) {
                fail(std::move(s));
                break;
            }
            at += len;
        }
        if (stop_) break;
        stats.records += e->records;
        stats.documents += e->lengths.size();
        stats.tokens += e->ids.size();
        stats.skipped += e->skipped;
        stats.text_bytes += e->text_bytes;
        stats.input_bytes += e->input_bytes;
        for (auto& s : e->skips)
            if (stats.first_skipped.size() < 10) stats.first_skipped.push_back(std::move(s));
        stats.file_bytes_done = std::max(stats.file_bytes_done, e->file_position);
        const auto now = std::chrono::steady_clock::now();
        if (progress && now - last_progress > std::chrono::milliseconds(500)) {
            stats.seconds = std::chrono::duration<double>(now - start).count();
            progress(stats);
            last_progress = now;
        }
    }
    join_all();
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!error_.ok()) return error_;
    if (options_.cancel != nullptr && options_.cancel->load())
        return Status{Errc::kIo, "interrupted; the previous output, if any, is unchanged"};
    return stats;
}

}  // namespace

Result<TokenizeStats> run_tokenize(const Tokenizer& tokenizer, const TokenizeOptions& options,
                                   ShardWriter& writer, const ProgressFn& progress) {
    Pipeline p(tokenizer, options, writer);
    return p.run(progress);
}

}  // namespace trainrig::data
