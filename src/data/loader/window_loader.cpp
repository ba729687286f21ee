#include "data/loader/window_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace trainrig::data {

std::string LoaderState::to_json() const {
    return nlohmann::json{{"seed", seed},
                          {"epoch", epoch},
                          {"position", position},
                          {"window", window},
                          {"samples", samples}}
        .dump();
}

Result<LoaderState> LoaderState::from_json(std::string_view text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    LoaderState s;
    for (const auto& [key, field] :
         {std::pair{"seed", &s.seed}, std::pair{"epoch", &s.epoch},
          std::pair{"position", &s.position}, std::pair{"window", &s.window},
          std::pair{"samples", &s.samples}}) {
        if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned())
            return Status{Errc::kInvalidInput,
                          fmt::format("loader state lacks the unsigned integer {:?}", key)};
        *field = j[key].get<uint64_t>();
    }
    return s;
}

WindowLoader::WindowLoader(std::shared_ptr<const TokenCorpus> corpus, LoaderOptions options)
    : corpus_(std::move(corpus)), options_(options) {}

Result<WindowLoader> WindowLoader::create(std::shared_ptr<const TokenCorpus> corpus,
                                          LoaderOptions options) {
    if (options.window == 0 || options.batch == 0)
        return Status{Errc::kInvalidInput, "the loader needs a window and a batch of at least 1"};
    if (options.world < 1 || options.rank < 0 || options.rank >= options.world)
        return Status{Errc::kInvalidInput,
                      fmt::format("rank {} is outside a world of {}", options.rank, options.world)};
    WindowLoader l(std::move(corpus), options);
    for (size_t p = 0; p < l.corpus_->parts(); ++p) {
        l.first_sample_.push_back(l.total_samples_);
        const uint64_t n = l.corpus_->part_tokens(p);
        if (n > options.window) l.total_samples_ += (n - 1) / options.window;
    }
    const uint64_t step = options.batch * static_cast<uint64_t>(options.world);
    if (l.total_samples_ < step)
        return Status{Errc::kInvalidInput,
                      fmt::format("the data holds {} windows of {} + 1 tokens, fewer than one "
                                  "step needs ({} ranks x batch {})",
                                  l.total_samples_, options.window, options.world, options.batch)};
    l.state_.seed = options.seed;
    l.state_.window = options.window;
    l.state_.samples = l.total_samples_;
    l.start_epoch(0);
    return l;
}

uint64_t WindowLoader::steps_per_epoch() const {
    return total_samples_ / (options_.batch * static_cast<uint64_t>(options_.world));
}

void WindowLoader::start_epoch(uint64_t epoch) {
    state_.epoch = epoch;
    state_.position = 0;
    order_ = Permutation(total_samples_, options_.seed ^ splitmix64(epoch));
}

uint64_t WindowLoader::next_sample(uint64_t row) const {
    const uint64_t step = options_.batch * static_cast<uint64_t>(options_.world);
    const uint64_t offset = static_cast<uint64_t>(options_.rank) * options_.batch + row;
    if (state_.position + step > total_samples_) {  // next_batch starts the next epoch first
        if (!options_.shuffle) return offset;
        return Permutation(total_samples_, options_.seed ^ splitmix64(state_.epoch + 1))(offset);
    }
    const uint64_t i = state_.position + offset;
    return options_.shuffle ? order_(i) : i;
}

void WindowLoader::read_sample(uint64_t sample, uint32_t* out) const {
    const auto it = std::upper_bound(first_sample_.begin(), first_sample_.end(), sample);
    const size_t part = static_cast<size_t>(it - first_sample_.begin()) - 1;
    const uint64_t first = (sample - first_sample_[part]) * options_.window;
    corpus_->copy(part, first, options_.window + 1, out);
}

void WindowLoader::next_batch(std::vector<uint32_t>& out) {
    out.resize(batch_tokens());
    next_batch(out.data());
}

void WindowLoader::next_batch(uint32_t* out) {
    const uint64_t step = options_.batch * static_cast<uint64_t>(options_.world);
    if (state_.position + step > total_samples_) start_epoch(state_.epoch + 1);
    const uint64_t row_tokens = options_.window + 1;
    for (uint64_t row = 0; row < options_.batch; ++row)
        read_sample(next_sample(row), out + row * row_tokens);
    state_.position += step;
}

Status WindowLoader::restore(const LoaderState& s) {
    if (s.window != options_.window || s.samples != total_samples_)
        return {Errc::kInvalidInput,
                fmt::format("the saved loader state is for {} windows of {} tokens, but this "
                            "data has {} windows of {}; the dataset or sequence length changed",
                            s.samples, s.window, total_samples_, options_.window)};
    if (s.seed != options_.seed)
        return {Errc::kInvalidInput, fmt::format("the saved loader state has seed {}, this run {}",
                                                 s.seed, options_.seed)};
    start_epoch(s.epoch);
    state_.position = s.position;
    return ok_status();
}

}  // namespace trainrig::data
