// Byte-level BPE tokenizers on tiny in-memory vocabularies: UTF-8 repair, GPT-2's byte
// alphabet, the pre-tokenizer regex rewrite, both merge rules, special tokens and the loaders'
// error messages. Each test names the rule it checks and, where a number comes from outside,
// its source.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "data/tokenizer/bpe_model.h"
#include "data/tokenizer/bpe_tokenizer.h"
#include "data/tokenizer/byte_level.h"
#include "data/tokenizer/loaders.h"
#include "data/tokenizer/open_tokenizer.h"
#include "data/tokenizer/presets.h"
#include "data/tokenizer/pretokenizer.h"
#include "data/tokenizer/utf8.h"
#include "has_text.h"

namespace trainrig::data {
namespace {

namespace fs = std::filesystem;

using Ids = std::vector<uint32_t>;

std::string fffd(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "\xEF\xBF\xBD";
    return s;
}

// ---------------------------------------------------------------------------------------------
// UTF-8

TEST(DataUtf8, ValidatesWellFormedTextOnly) {
    EXPECT_TRUE(is_valid_utf8(""));
    EXPECT_TRUE(is_valid_utf8("plain ASCII"));
    EXPECT_TRUE(is_valid_utf8("日本語 😀 é"));
    EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));   // U+10FFFF, the last code point
    EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate U+D800
    EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
    EXPECT_FALSE(is_valid_utf8("ab\xE2\x82"));        // '€' cut short at the end
    EXPECT_FALSE(is_valid_utf8("\xFF"));
}

TEST(DataUtf8, FirstInvalidIsTheOffsetOfTheBadSequence) {
    EXPECT_EQ(first_invalid_utf8("héllo"), 6u);  // valid: the size
    EXPECT_EQ(first_invalid_utf8("ab\xC0\xAF"), 2u);
    EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0u);
    EXPECT_EQ(first_invalid_utf8("é\xE2\x82"), 2u);  // truncated after a valid 2-byte char
    EXPECT_EQ(first_invalid_utf8("€\x80"), 3u);      // stray continuation byte
}

TEST(DataUtf8, RepairFollowsUnicodeTable3_8) {
    // The Unicode Standard (15.0) §3.9, Table 3-8 "Use of U+FFFD in UTF-8 Conversion":
    // 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d.
    EXPECT_EQ(repair_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
              "a" + fffd(3) + "b" + fffd(1) + "c" + fffd(2) + "d");
}

TEST(DataUtf8, RepairReplacesEachMaximalSubpart) {
    // Unicode 15.0 §3.9 Tables 3-9 to 3-12 (the WHATWG decoder gives the same).
    // Non-shortest forms: C0 AF E0 80 BF F0 81 82 41 -> 8 x FFFD, A.
    EXPECT_EQ(repair_utf8("\xC0\xAF\xE0\x80\xBF\xF0\x81\x82\x41"), fffd(8) + "A");
    // Surrogates: ED A0 80 ED BF BF ED AF 41 -> 8 x FFFD, A.
    EXPECT_EQ(repair_utf8("\xED\xA0\x80\xED\xBF\xBF\xED\xAF\x41"), fffd(8) + "A");
    // Other ill-formed: F4 91 92 93 FF 41 80 BF 42 -> 5 x FFFD, A, 2 x FFFD, B.
    EXPECT_EQ(repair_utf8("\xF4\x91\x92\x93\xFF\x41\x80\xBF\x42"), fffd(5) + "A" + fffd(2) + "B");
    // Truncated: E1 80 E2 F0 91 92 F1 BF 41 -> 4 x FFFD, A.
    EXPECT_EQ(repair_utf8("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41"), fffd(4) + "A");
    // F0 80 80 41: 80 cannot follow F0 (it needs 90..BF), so each byte is its own subpart.
    EXPECT_EQ(repair_utf8("\xF0\x80\x80\x41"), fffd(3) + "A");
    // A valid prefix cut off by the end of the text is one subpart.
    EXPECT_EQ(repair_utf8("ab\xF0\x9F\x98"), "ab" + fffd(1));
}

TEST(DataUtf8, RepairKeepsValidTextAndAlwaysYieldsValidText) {
    EXPECT_EQ(repair_utf8("日本語 😀"), "日本語 😀");
    std::mt19937 rng(7);
    const std::string alphabet = "a\x80\xBF\xC2\xDF\xE0\xED\xEF\xF0\xF4\xF5\xFF\xA0\x90\x8F";
    for (int n = 0; n < 2000; ++n) {
        std::string s(rng() % 12, ' ');
        for (char& c : s) c = alphabet[rng() % alphabet.size()];
        const std::string fixed = repair_utf8(s);
        ASSERT_TRUE(is_valid_utf8(fixed)) << testing::PrintToString(s);
        ASSERT_EQ(first_invalid_utf8(s) == s.size(), is_valid_utf8(s)) << testing::PrintToString(s);
        if (is_valid_utf8(s)) {
            ASSERT_EQ(fixed, s);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GPT-2's byte alphabet

// The code point of a one- or two-byte UTF-8 character.
unsigned code_point(const std::string& c) {
    if (c.size() == 1) return static_cast<unsigned char>(c[0]);
    return ((static_cast<unsigned char>(c[0]) & 0x1Fu) << 6) |
           (static_cast<unsigned char>(c[1]) & 0x3Fu);
}

TEST(DataByteLevel, PrintableLatin1BytesStandForThemselves) {
    // openai/gpt-2 src/encoder.py bytes_to_unicode: '!'..'~', '¡'..'¬', '®'..'ÿ' = 94 + 12 + 82.
    int same = 0;
    for (unsigned b = 0; b < 256; ++b)
        same += code_point(byte_level_char(static_cast<unsigned char>(b))) == b;
    EXPECT_EQ(same, 188);
    EXPECT_EQ(byte_level_char('A'), "A");
    EXPECT_EQ(byte_level_char(0xE9), "é");
}

TEST(DataByteLevel, OtherBytesMapUpwardFromU0100InByteOrder) {
    // bytes_to_unicode: the 68 others get 256 + n in byte order, so 0x00 -> U+0100 'Ā',
    // 0x0A -> U+010A 'Ċ', 0x20 -> U+0120 'Ġ', 0x7F -> U+0121 'ġ', 0xAD -> U+0143 'Ń'.
    EXPECT_EQ(byte_level_char(0x00), "Ā");
    EXPECT_EQ(byte_level_char('\n'), "Ċ");
    EXPECT_EQ(byte_level_char(' '), "Ġ");
    EXPECT_EQ(byte_level_char(0x7F), "ġ");
    EXPECT_EQ(byte_level_char(0xAD), "Ń");
}

TEST(DataByteLevel, DecodeInvertsEveryByte) {
    std::string shown, raw;
    for (unsigned b = 0; b < 256; ++b) {
        shown += byte_level_char(static_cast<unsigned char>(b));
        raw.push_back(static_cast<char>(b));
    }
    EXPECT_EQ(byte_level_decode(shown), raw);
    EXPECT_EQ(byte_level_decode("ĠhelloĊ"), " hello\n");
    EXPECT_EQ(byte_level_decode(""), "");
}

TEST(DataByteLevel, DecodeRejectsCharactersOutsideTheAlphabet) {
    EXPECT_EQ(byte_level_decode(" "), std::nullopt);  // a raw space is shown as 'Ġ'
    EXPECT_EQ(byte_level_decode("a\nb"), std::nullopt);
    EXPECT_EQ(byte_level_decode("ń"), std::nullopt);     // U+0144, one past the last one used
    EXPECT_EQ(byte_level_decode("€"), std::nullopt);     // three bytes
    EXPECT_EQ(byte_level_decode("\xC4"), std::nullopt);  // truncated
}

TEST(DataByteLevel, DecodeRejectsMalformedUtf8) {
    // byte_level.h: nullopt for a token that "is not valid UTF-8". C4 20 has no continuation
    // byte (it would read as U+0120 'Ġ', a space); C1 A1 is an overlong 'a'.
    EXPECT_EQ(byte_level_decode("\xC4\x20"), std::nullopt);
    EXPECT_EQ(byte_level_decode("\xC1\xA1"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// The pre-tokenizer

TEST(DataPretokenizer, BackslashSOutsideAClassGainsNextLine) {
    EXPECT_EQ(pcre2_pattern(R"(\s+)"), R"([\s\x{85}]+)");
    EXPECT_EQ(pcre2_pattern(R"(\S+)"), R"([^\s\x{85}]+)");
    EXPECT_EQ(pcre2_pattern(R"(\s+(?!\S))"), R"([\s\x{85}]+(?![^\s\x{85}]))");
}

TEST(DataPretokenizer, BackslashSInsideAClassGainsNextLine) {
    EXPECT_EQ(pcre2_pattern(R"([^\s\p{L}\p{N}])"), R"([^\s\x{85}\p{L}\p{N}])");
    EXPECT_EQ(pcre2_pattern(R"([]\s])"), R"([]\s\x{85}])");  // leading ']' is a member
}

TEST(DataPretokenizer, EscapedBracketsAndBackslashesAreLeftAlone) {
    EXPECT_EQ(pcre2_pattern(R"(\[\s\])"), R"(\[[\s\x{85}]\])");
    EXPECT_EQ(pcre2_pattern(R"([\]\s])"), R"([\]\s\x{85}])");
    EXPECT_EQ(pcre2_pattern(R"(\\s)"), R"(\\s)");  // a backslash, then the letter s
    EXPECT_EQ(pcre2_pattern(R"(\p{L}+|\d)"), R"(\p{L}+|\d)");
}

std::vector<std::string> pieces_of(std::string_view pattern, std::string_view text) {
    auto re = Pretokenizer::compile(pattern);
    EXPECT_TRUE(re) << re.status().message();
    if (!re) return {};
    Pretokenizer::Cursor cursor(*re);
    std::vector<std::string> out;
    size_t from = 0, start = 0, end = 0;
    while (cursor.next(text, from, start, end)) {
        out.emplace_back(text.substr(start, end - start));
        from = end;
    }
    EXPECT_TRUE(cursor.status().ok()) << cursor.status().message();
    return out;
}

using Pieces = std::vector<std::string>;

TEST(DataPretokenizer, NextLineIsWhitespaceAsInRustAndPython) {
    // U+0085 is White_Space in Unicode's PropList, hence Rust's and Python's \s; PCRE2's \s
    // under UCP leaves it out, which would make "a\u0085b" one \S+ piece.
    EXPECT_EQ(pieces_of(R"(\s+|\S+)", "a\u0085b"), (Pieces{"a", "\u0085", "b"}));
    EXPECT_EQ(pieces_of(R"([^\s]+|\s+)", "a\u0085b"), (Pieces{"a", "\u0085", "b"}));
}

TEST(DataPretokenizer, DollarMatchesOnlyAtTheEnd) {
    // Rust's `$` is the end of the text; PCRE2's default also matches before a final newline.
    EXPECT_EQ(pieces_of(R"(\w+$|\w|\n)", "ab\n"), (Pieces{"a", "b", "\n"}));
    EXPECT_EQ(pieces_of(R"(\w+$|\w|\n)", "ab"), (Pieces{"ab"}));
}

TEST(DataPretokenizer, TextBetweenMatchesIsDropped) {
    EXPECT_EQ(pieces_of(R"(\d+)", "a12b3"), (Pieces{"12", "3"}));
    EXPECT_EQ(pieces_of(R"(\d+)", "abc"), Pieces{});
}

TEST(DataPretokenizer, ABadPatternIsRefusedWithItsOffset) {
    auto re = Pretokenizer::compile("(ab");
    ASSERT_FALSE(re);
    EXPECT_EQ(re.status().code(), Errc::kInvalidInput);
    EXPECT_TRUE(has(re.status().message(), "does not compile at offset 3"))
        << re.status().message();
}

TEST(DataPretokenizer, TheErrorOffsetCountsThePatternAsWritten) {
    // The offset is read against the pattern the user gave, not the rewrite with \x{85}:
    // `\s+(` is missing its ')' at offset 4 (the rewrite is 12 characters long).
    auto re = Pretokenizer::compile(R"(\s+()");
    ASSERT_FALSE(re);
    EXPECT_TRUE(has(re.status().message(), "at offset 4:")) << re.status().message();
}

TEST(DataPretokenizer, PosixClassInsideABracketKeepsItsMeaning) {
    // `[[:digit:]\s]+` is one class (digits and white space); the ']' of `[:digit:]` does not
    // close it. Over "1 ]" it matches "1 " and leaves the ']' out.
    EXPECT_EQ(pieces_of(R"([[:digit:]\s]+)", "1 ]"), (Pieces{"1 "}));
}

TEST(DataPretokenizer, EmptyMatchesStepOverWholeCharacters) {
    // `x*` matches empty at each non-x position; the cursor must step a whole character and
    // still find the later non-empty match.
    EXPECT_EQ(pieces_of("x*", "é日xx"), (Pieces{"xx"}));
}

// ---------------------------------------------------------------------------------------------
// BPE merge rules

// Ids 0..255 are the single bytes (id == byte value); `extra` follow from 256.
std::vector<std::string> byte_tokens(std::initializer_list<std::string> extra = {}) {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) t.emplace_back(1, static_cast<char>(b));
    t.insert(t.end(), extra.begin(), extra.end());
    return t;
}

BpeModel must(Result<BpeModel> r) {
    if (!r) ADD_FAILURE() << r.status().message();
    if (!r) return BpeModel(byte_tokens(), false);
    return std::move(r).value();
}

Ids encode_piece(const BpeModel& m, std::string_view piece) {
    Ids out;
    m.encode_piece(piece, out);
    return out;
}

TEST(DataBpe, RankFilesMergeTheLowestRankedJoinedTokenFirst) {
    // tiktoken _byte_pair_merge: the pair whose concatenation has the lowest rank merges.
    // "abc": (a,b)->"ab" and (b,c)->"bc"; whichever has the lower rank wins.
    const auto bc_first = must(BpeModel::from_ranks(byte_tokens({"bc", "ab"}), "t"));
    EXPECT_EQ(encode_piece(bc_first, "abc"), (Ids{'a', 256}));
    const auto ab_first = must(BpeModel::from_ranks(byte_tokens({"ab", "bc"}), "t"));
    EXPECT_EQ(encode_piece(ab_first, "abc"), (Ids{256, 'c'}));
}

TEST(DataBpe, EqualRanksMergeLeftmostFirst) {
    // tiktoken and tokenizers both take the leftmost of equal-priority pairs.
    const auto m = must(BpeModel::from_ranks(byte_tokens({"aa"}), "t"));
    EXPECT_EQ(encode_piece(m, "aaa"), (Ids{256, 'a'}));
    EXPECT_EQ(encode_piece(m, "aaaa"), (Ids{256, 256}));
    const auto l = must(BpeModel::from_merges(byte_tokens({"aa"}), {{"a", "a"}}, false, "t"));
    EXPECT_EQ(encode_piece(l, "aaa"), (Ids{256, 'a'}));
}

TEST(DataBpe, MergeListsFollowThePairsOrderNotTokenIds) {
    // GPT-2 vocab.bpe: the merge listed first applies first, whatever ids the tokens have.
    // "bc" is listed first, though "ab" has the lower id.
    const auto m = must(
        BpeModel::from_merges(byte_tokens({"ab", "bc"}), {{"b", "c"}, {"a", "b"}}, false, "t"));
    EXPECT_EQ(encode_piece(m, "abc"), (Ids{'a', 257}));
    // The same tokens as a rank file merge by id: "ab" (256) first.
    const auto r = must(BpeModel::from_ranks(byte_tokens({"ab", "bc"}), "t"));
    EXPECT_EQ(encode_piece(r, "abc"), (Ids{256, 'c'}));
}

TEST(DataBpe, OnlyListedPairsMergeInAMergeList) {
    // "abc" is a token but no listed merge makes it; a rank file would join (ab, c) by rank.
    const auto m =
        must(BpeModel::from_merges(byte_tokens({"ab", "abc"}), {{"a", "b"}}, false, "t"));
    EXPECT_EQ(encode_piece(m, "abcd"), (Ids{256, 'c', 'd'}));
    const auto r = must(BpeModel::from_ranks(byte_tokens({"ab", "abc"}), "t"));
    EXPECT_EQ(encode_piece(r, "abcd"), (Ids{257, 'd'}));
}

TEST(DataBpe, WholePieceThatIsATokenWinsOnlyWithTheShortcut) {
    // tiktoken emits a pre-token found in the ranks as is; tokenizers does only with
    // ignore_merges. Here merges alone split "abc" as a + bc.
    const auto tokens = byte_tokens({"ab", "bc", "abc"});
    const std::vector<std::pair<std::string, std::string>> merges = {{"b", "c"}, {"a", "b"}};
    const auto plain = must(BpeModel::from_merges(tokens, merges, false, "t"));
    EXPECT_EQ(encode_piece(plain, "abc"), (Ids{'a', 257}));
    const auto shortcut = must(BpeModel::from_merges(tokens, merges, true, "t"));
    EXPECT_EQ(encode_piece(shortcut, "abc"), (Ids{258}));
    const auto ranks = must(BpeModel::from_ranks(tokens, "t"));
    EXPECT_TRUE(ranks.whole_piece_first());
    EXPECT_EQ(encode_piece(ranks, "abc"), (Ids{258}));
}

TEST(DataBpe, UnreachableRankTokenIsUsedOnlyForAWholePiece) {
    // No split of "xyz" is two tokens, so merges never reach it inside a longer piece.
    const auto m = must(BpeModel::from_ranks(byte_tokens({"xyz"}), "t"));
    EXPECT_EQ(encode_piece(m, "xyz"), (Ids{256}));
    EXPECT_EQ(encode_piece(m, "xyzx"), (Ids{'x', 'y', 'z', 'x'}));
}

TEST(DataBpe, VocabularyWithoutEveryByteIsRefused) {
    auto tokens = byte_tokens();
    tokens[0x41].clear();
    auto m = BpeModel::from_ranks(tokens, "ranks.txt");
    ASSERT_FALSE(m);
    EXPECT_TRUE(has(m.status().message(), "ranks.txt has no token for the byte 0x41"))
        << m.status().message();
}

TEST(DataBpe, RepeatedTokenIsRefused) {
    auto m = BpeModel::from_ranks(byte_tokens({"ab", "ab"}), "ranks.txt");
    ASSERT_FALSE(m);
    EXPECT_TRUE(has(m.status().message(), "lists the token \"ab\" twice")) << m.status().message();
}

TEST(DataBpe, MergeNamingAnUnknownTokenIsRefusedWithItsNumber) {
    auto m = BpeModel::from_merges(byte_tokens({"ab"}), {{"a", "b"}, {"ab", "c"}}, false, "v.bpe");
    ASSERT_FALSE(m);
    EXPECT_TRUE(has(m.status().message(), "v.bpe: merge 2 (\"ab\" + \"c\")"))
        << m.status().message();
}

TEST(DataBpe, LongRunsMergeLeftmostOnBothPaths) {
    // Pieces up to 48 bytes take the quadratic scan, longer ones the heap (bpe_model.cpp,
    // kSmallPiece). Both must pair a run of a's from the left: "aa" first, then "aaaa".
    const auto m = must(BpeModel::from_ranks(byte_tokens({"aa", "aaaa"}), "t"));
    for (const size_t n : {41u, 1001u}) {
        Ids want((n - 1) / 4, 257);
        want.push_back('a');
        EXPECT_EQ(encode_piece(m, std::string(n, 'a')), want) << n << " bytes";
    }
    // 1000 x "ab": 500 "ab", then 250 "abab".
    const auto ab = must(BpeModel::from_ranks(byte_tokens({"ab", "abab"}), "t"));
    std::string text;
    for (int i = 0; i < 500; ++i) text += "ab";
    EXPECT_EQ(encode_piece(ab, text), Ids(250, 257));
}

// The merge loop exactly as the rules state it, quadratic and allocation-heavy: repeatedly join
// the adjacent pair with the lowest priority, leftmost on ties, until no pair has one.
using Priority = std::function<std::optional<uint32_t>(const std::string&, const std::string&)>;

std::vector<std::string> naive_merge(std::string_view piece, const Priority& priority) {
    std::vector<std::string> parts;
    for (const char c : piece) parts.emplace_back(1, c);
    for (;;) {
        std::optional<uint32_t> best;
        size_t at = 0;
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
            const auto p = priority(parts[i], parts[i + 1]);
            if (p && (!best || *p < *best)) {
                best = p;
                at = i;
            }
        }
        if (!best) return parts;
        parts[at] += parts[at + 1];
        parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    }
}

Ids naive_encode(const BpeModel& m, std::string_view piece, const Priority& priority) {
    if (m.whole_piece_first() && m.find(piece) != kNoToken) return {m.find(piece)};
    Ids out;
    for (const auto& p : naive_merge(piece, priority)) out.push_back(m.find(p));
    return out;
}

// Lengths 1..200: the scan up to 48 bytes, the heap above.
std::vector<size_t> test_lengths() {
    std::vector<size_t> out;
    for (size_t n = 1; n <= 200; ++n) out.push_back(n);
    return out;
}

std::string random_text(std::mt19937& rng, size_t n, std::string_view alphabet) {
    std::string s(n, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
}

TEST(DataBpe, RankModelAgreesWithTheNaiveRuleOnRandomText) {
    std::mt19937 rng(2024);
    auto tokens = byte_tokens();
    std::map<std::string, uint32_t> rank;
    while (tokens.size() < 256 + 80) {
        std::string t = random_text(rng, 2 + rng() % 5, "abcd");
        if (rank.emplace(t, static_cast<uint32_t>(tokens.size())).second) tokens.push_back(t);
    }
    const auto m = must(BpeModel::from_ranks(tokens, "t"));
    const Priority priority = [&](const std::string& a,
                                  const std::string& b) -> std::optional<uint32_t> {
        const auto it = rank.find(a + b);
        return it == rank.end() ? std::nullopt : std::optional<uint32_t>(it->second);
    };
    for (const size_t n : test_lengths()) {
        const std::string text = random_text(rng, n, "abcde");
        ASSERT_EQ(encode_piece(m, text), naive_encode(m, text, priority)) << text;
    }
}

TEST(DataBpe, MergeListModelAgreesWithTheNaiveRuleOnRandomText) {
    std::mt19937 rng(4202);
    // Merges built up from the letters, then the new tokens given shuffled ids so that merge
    // order and id order differ.
    std::vector<std::string> pool = {"a", "b", "c", "d"}, added;
    std::vector<std::pair<std::string, std::string>> merges;
    while (merges.size() < 80) {
        const std::string a = pool[rng() % pool.size()], b = pool[rng() % pool.size()];
        if (a.size() + b.size() > 8) continue;
        merges.emplace_back(a, b);
        if (std::find(pool.begin(), pool.end(), a + b) == pool.end()) {
            pool.push_back(a + b);
            added.push_back(a + b);
        }
    }
    std::shuffle(added.begin(), added.end(), rng);
    auto tokens = byte_tokens();
    tokens.insert(tokens.end(), added.begin(), added.end());
    std::map<std::pair<std::string, std::string>, uint32_t> first_listed;
    for (uint32_t i = 0; i < merges.size(); ++i) first_listed.emplace(merges[i], i);
    const Priority priority = [&](const std::string& a,
                                  const std::string& b) -> std::optional<uint32_t> {
        const auto it = first_listed.find({a, b});
        return it == first_listed.end() ? std::nullopt : std::optional<uint32_t>(it->second);
    };
    for (const bool whole_piece_first : {false, true}) {
        const auto m = must(BpeModel::from_merges(tokens, merges, whole_piece_first, "t"));
        for (const size_t n : test_lengths()) {
            const std::string text = random_text(rng, n, "abcde");
            ASSERT_EQ(encode_piece(m, text), naive_encode(m, text, priority))
                << text << (whole_piece_first ? " (whole piece first)" : "");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tokenizer: pre-tokenizer + model + special tokens

// Bytes 0..255, then "ab" (256), " ab" (257), "<|x" (258); specials "<|x|>" (300) and
// "<|x|>y" (301) above the ordinary tokens; GPT-2's pattern.
std::shared_ptr<const Tokenizer> tiny_tokenizer(bool nfc = false, bool add_prefix_space = false) {
    auto model = must(BpeModel::from_ranks(byte_tokens({"ab", " ab", "<|x"}), "tiny"));
    BpeOptions o;
    o.kind = "tiny";
    o.pattern = find_preset("gpt2")->pattern;
    o.specials = {{"<|x|>", 300}, {"<|x|>y", 301}};
    o.eod = 300;
    o.nfc = nfc;
    o.add_prefix_space = add_prefix_space;
    auto t = make_bpe_tokenizer(std::move(model), std::move(o));
    if (!t) ADD_FAILURE() << t.status().message();
    return t ? *t : nullptr;
}

Ids encode(const Tokenizer& t, std::string_view text, bool allow_special = false) {
    auto ids = t.encode(text, allow_special);
    EXPECT_TRUE(ids) << ids.status().message();
    return ids ? *ids : Ids{};
}

TEST(DataTokenizer, VocabSizeCountsSpecialsAboveTheOrdinaryTokens) {
    const auto t = tiny_tokenizer();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->vocab_size(), 302u);  // 259 ordinary tokens, specials up to id 301
    EXPECT_EQ(t->eod(), 300u);
    EXPECT_EQ(t->kind(), "tiny");
}

TEST(DataTokenizer, SpecialStringsAreOrdinaryTextByDefault) {
    // tiktoken's encode_ordinary: "<|x|>" is pre-tokenized like any text (the GPT-2 pattern
    // cuts it into "<|", "x", "|>") and no special id appears.
    const auto t = tiny_tokenizer();
    ASSERT_TRUE(t);
    const Ids ids = encode(*t, "ab<|x|>");
    EXPECT_EQ(ids, (Ids{256, '<', '|', 'x', '|', '>'}));
    EXPECT_EQ(*t->decode(ids), "ab<|x|>");
}

TEST(DataTokenizer, AllowSpecialMatchesTheLongestSpecialAtAPosition) {
    const auto t = tiny_tokenizer();
    ASSERT_TRUE(t);
    EXPECT_EQ(encode(*t, "ab<|x|>yab<|x|>", true), (Ids{256, 301, 256, 300}));
    EXPECT_EQ(encode(*t, "<|x|><|x|>", true), (Ids{300, 300}));
    EXPECT_EQ(*t->decode(Ids{256, 301, 300}), "ab<|x|>y<|x|>");
}

TEST(DataTokenizer, DecodeOfEncodeIsTheText) {
    const auto t = tiny_tokenizer();
    ASSERT_TRUE(t);
    for (const std::string text :
         {"Hello, world! ab ab", "日本語のテキスト", "emoji 😀👍🏽 and\ttabs\n\nlines",
          "  leading and trailing  ", "mixed: abc 中文 ab😀ab 123"}) {
        const Ids ids = encode(*t, text);
        auto back = t->decode(ids);
        ASSERT_TRUE(back) << back.status().message();
        EXPECT_EQ(*back, text);
    }
}

TEST(DataTokenizer, DecodeRejectsIdsOutsideTheVocabularyByName) {
    const auto t = tiny_tokenizer();
    ASSERT_TRUE(t);
    auto above = t->decode(Ids{'a', 302});
    ASSERT_FALSE(above);
    EXPECT_TRUE(has(above.status().message(), "token id 302 is not in the vocabulary (size 302)"))
        << above.status().message();
    auto gap = t->decode(Ids{299});  // between the ordinary tokens and the specials
    ASSERT_FALSE(gap);
    EXPECT_TRUE(has(gap.status().message(), "token id 299")) << gap.status().message();
}

TEST(DataTokenizer, InvalidUtf8EncodesAsItsRepairedText) {
    // utf8.h: the reference tokenizers see text decoded with errors="replace".
    const auto t = tiny_tokenizer();
    ASSERT_TRUE(t);
    const std::string bad = "ab\xFF\xC0 ab\xE2\x82";
    EXPECT_EQ(encode(*t, bad), encode(*t, repair_utf8(bad)));
    EXPECT_EQ(*t->decode(encode(*t, bad)), "ab" + fffd(2) + " ab" + fffd(1));
}

TEST(DataTokenizer, RepeatedPiecesEncodeTheSameThroughOneEncoder) {
    // The encoder caches pieces of up to 32 bytes; a cached piece must give the model's ids.
    const auto t = tiny_tokenizer();
    ASSERT_TRUE(t);
    auto enc = t->encoder(false);
    Ids ids;
    ASSERT_TRUE(enc->encode("ab ab ab", ids).ok());
    ASSERT_TRUE(enc->encode("ab ab", ids).ok());
    EXPECT_EQ(ids, (Ids{256, 257, 257, 256, 257}));
}

TEST(DataTokenizer, NfcNormalizesBeforeEncoding) {
    // tokenizers' NFC normalizer (Qwen2): e + U+0301 COMBINING ACUTE composes to U+00E9.
    const auto nfc = tiny_tokenizer(true);
    const auto raw = tiny_tokenizer(false);
    ASSERT_TRUE(nfc && raw);
    EXPECT_EQ(encode(*nfc, "e\u0301"), (Ids{0xC3, 0xA9}));
    EXPECT_EQ(encode(*raw, "e\u0301"), (Ids{'e', 0xCC, 0x81}));
}

TEST(DataTokenizer, AddPrefixSpaceTreatsTextAsIfASpacePrecededIt) {
    // tokenizers' ByteLevel(add_prefix_space=true): "ab" encodes as " ab" (257).
    const auto t = tiny_tokenizer(false, true);
    ASSERT_TRUE(t);
    EXPECT_EQ(encode(*t, "ab"), (Ids{257}));
    EXPECT_EQ(encode(*t, " ab"), (Ids{257}));
}

TEST(DataTokenizer, BadPatternIsRefusedAtConstruction) {
    BpeOptions o;
    o.pattern = "[unclosed";
    auto t = make_bpe_tokenizer(must(BpeModel::from_ranks(byte_tokens(), "t")), o);
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), "pre-tokenizer pattern")) << t.status().message();
}

// ---------------------------------------------------------------------------------------------
// Loaders

class DataLoaders : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               fmt::format("trainrig-data-tok-{}-{}", ::getpid(),
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, std::string_view content) {
        const fs::path p = dir_ / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
        return p.string();
    }

    fs::path dir_;
};

std::string base64(std::string_view in) {
    static constexpr char kDigits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < in.size(); i += 3) {
        const size_t n = std::min<size_t>(3, in.size() - i);
        uint32_t v = 0;
        for (size_t k = 0; k < 3; ++k)
            v = (v << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0u);
        out += kDigits[(v >> 18) & 63];
        out += kDigits[(v >> 12) & 63];
        out += n > 1 ? kDigits[(v >> 6) & 63] : '=';
        out += n > 2 ? kDigits[v & 63] : '=';
    }
    return out;
}

// A tiktoken rank file: the 256 bytes at ranks 0..255, then `extra`.
std::string rank_file(std::initializer_list<std::string> extra = {}) {
    std::string out;
    uint32_t rank = 0;
    for (const auto& t : byte_tokens(extra)) out += fmt::format("{} {}\n", base64(t), rank++);
    return out;
}

TEST_F(DataLoaders, TiktokenWithAPresetLoadsAndEncodes) {
    const auto path = write("r.tiktoken", rank_file({"he", "ll", "hell", "hello", " w"}));
    auto t = load_tiktoken(path, find_preset("gpt2"));
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ((*t)->kind(), "gpt2");
    EXPECT_EQ((*t)->vocab_size(), 50257u);  // <|endoftext|> is 50256 in the gpt2 preset
    EXPECT_EQ(encode(**t, "hello world"), (Ids{259, 260, 'o', 'r', 'l', 'd'}));
    EXPECT_EQ(encode(**t, "hello<|endoftext|>", true), (Ids{259, 50256}));
}

TEST_F(DataLoaders, TiktokenMalformedLineNamesFileAndLine) {
    const auto path = write("r.tiktoken", "IQ== 0\nIg== 1\nnot-base64 2\n");
    auto t = load_tiktoken(path, find_preset("gpt2"));
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), path + " line 3 is not `base64 rank`"))
        << t.status().message();
    const auto no_rank = write("s.tiktoken", "IQ== 0\nIg==\n");
    auto u = load_tiktoken(no_rank, find_preset("gpt2"));
    ASSERT_FALSE(u);
    EXPECT_TRUE(has(u.status().message(), no_rank + " line 2")) << u.status().message();
}

TEST_F(DataLoaders, TiktokenRepeatedRankIsRefused) {
    const auto path = write("r.tiktoken", "IQ== 0\nIg== 1\nIw== 1\n");
    auto t = load_tiktoken(path, find_preset("gpt2"));
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), path + " line 3 repeats rank 1")) << t.status().message();
}

TEST_F(DataLoaders, TiktokenOfUnknownSizeIsRefusedWithANextStep) {
    // presets.cpp: only 50256, 100256, 199998 and 128000 ranks identify a pre-tokenizer.
    const auto path = write("r.tiktoken", rank_file({"ab"}));
    auto t = load_tiktoken(path);
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), path + " holds 257 ranks")) << t.status().message();
    EXPECT_TRUE(has(t.status().next_step(), "--tokenizer cl100k")) << t.status().next_step();
}

TEST_F(DataLoaders, RankFileIsRecognisedByContentWhateverItsName) {
    // Meta ships Llama 3's ranks as tokenizer.model; open_tokenizer reads the content, so this
    // reaches the rank-file loader (and its count check), not SentencePiece.
    write("tok/tokenizer.model", rank_file());
    auto t = open_tokenizer((dir_ / "tok").string());
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), "holds 256 ranks")) << t.status().message();
}

TEST_F(DataLoaders, UnknownNameListsThePresets) {
    auto t = open_tokenizer("no-such-tokenizer-name");
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), Errc::kNotFound);
    EXPECT_TRUE(has(t.status().message(), "\"no-such-tokenizer-name\" is neither a preset"))
        << t.status().message();
    EXPECT_TRUE(has(t.status().message(), "(gpt2, cl100k, o200k, llama3)")) << t.status().message();
}

TEST_F(DataLoaders, FolderWithoutTokenizerFilesSaysWhatItLookedFor) {
    write("empty/readme.txt", "nothing here");
    const std::string folder = (dir_ / "empty").string();
    auto t = open_tokenizer(folder);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), Errc::kNotFound);
    EXPECT_TRUE(has(t.status().message(),
                    "the folder " + folder +
                        " holds neither encoder.json + vocab.bpe, nor tokenizer.json, nor "
                        "tokenizer.model"))
        << t.status().message();
}

TEST_F(DataLoaders, PresetWithoutItsFilesNamesTheFolder) {
    const char* saved = std::getenv("TRAINRIG_TOKENIZERS");
    const std::string old = saved != nullptr ? saved : "";
    ::setenv("TRAINRIG_TOKENIZERS", dir_.c_str(), 1);
    auto t = open_tokenizer("cl100k");
    if (saved != nullptr)
        ::setenv("TRAINRIG_TOKENIZERS", old.c_str(), 1);
    else
        ::unsetenv("TRAINRIG_TOKENIZERS");
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), "the cl100k tokenizer's files are not in " +
                                              dir_.string() + " (looked for cl100k_base.tiktoken)"))
        << t.status().message();
    EXPECT_TRUE(has(t.status().next_step(), "TRAINRIG_TOKENIZERS")) << t.status().next_step();
}

// A byte-level tokenizer.json: the 256 bytes at their own ids, "ab" (256), "abc" (257),
// "Ġabc" (258); merges as "a b" strings and as ["a", "b"] arrays; <|endoftext|> added at 300.
nlohmann::json hf_tokenizer() {
    nlohmann::json vocab = nlohmann::json::object();
    for (unsigned b = 0; b < 256; ++b) vocab[byte_level_char(static_cast<unsigned char>(b))] = b;
    vocab["ab"] = 256;
    vocab["abc"] = 257;
    vocab["Ġabc"] = 258;
    using J = nlohmann::json;
    J j = J::object();
    j["version"] = "1.0";
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
    j["added_tokens"] = J::array({J{{"id", 300}, {"content", "<|endoftext|>"}, {"special", true}}});
    j["model"] = J::object();
    j["model"]["type"] = "BPE";
    j["model"]["vocab"] = vocab;
    j["model"]["merges"] = J::array({"a b", J::array({"ab", "c"}), J::array({"Ġ", "abc"})});
    return j;
}

TEST_F(DataLoaders, HfTokenizerJsonLoadsAByteLevelBpe) {
    const auto path = write("tokenizer.json", hf_tokenizer().dump());
    auto t = load_hf_tokenizer_json(path);
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ((*t)->kind(), "hf-bpe");
    EXPECT_EQ((*t)->vocab_size(), 301u);
    EXPECT_EQ((*t)->eod(), 300u);
    // " abc" merges a+b, ab+c, then Ġ+abc; " ab" stops at Ġ + ab.
    EXPECT_EQ(encode(**t, "abc abc ab"), (Ids{257, 258, ' ', 256}));
    EXPECT_EQ(encode(**t, "abc<|endoftext|>", true), (Ids{257, 300}));
    EXPECT_EQ(*(*t)->decode(Ids{258, 300}), " abc<|endoftext|>");
}

TEST_F(DataLoaders, HfTokenizerJsonIsFoundInAFolderAndByContent) {
    write("hf/tokenizer.json", hf_tokenizer().dump());
    auto by_folder = open_tokenizer((dir_ / "hf").string());
    ASSERT_TRUE(by_folder) << by_folder.status().message();
    EXPECT_EQ((*by_folder)->kind(), "hf-bpe");
    const auto odd_name = write("weights.bin", hf_tokenizer().dump());
    auto by_content = open_tokenizer(odd_name);
    ASSERT_TRUE(by_content) << by_content.status().message();
    EXPECT_EQ((*by_content)->kind(), "hf-bpe");
}

TEST_F(DataLoaders, HfTokenizerJsonRefusesOtherModels) {
    auto j = hf_tokenizer();
    j["model"]["type"] = "WordPiece";
    const auto path = write("tokenizer.json", j.dump());
    auto t = load_hf_tokenizer_json(path);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), Errc::kUnsupported);
    EXPECT_TRUE(has(t.status().message(), path + ": a model other than BPE is not supported"))
        << t.status().message();
    EXPECT_FALSE(t.status().next_step().empty());
}

TEST_F(DataLoaders, HfTokenizerJsonRefusesMetaspace) {
    // SentencePiece-converted tokenizers (Llama 2, Mistral) use Metaspace, not ByteLevel.
    auto j = hf_tokenizer();
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}};
    const auto path = write("tokenizer.json", j.dump());
    auto t = load_hf_tokenizer_json(path);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.status().code(), Errc::kUnsupported);
    EXPECT_TRUE(has(t.status().message(), "the pre-tokenizer \"Metaspace\" is not supported"))
        << t.status().message();
}

TEST_F(DataLoaders, HfTokenizerJsonRefusesByteFallback) {
    auto j = hf_tokenizer();
    j["model"]["byte_fallback"] = true;
    const auto path = write("tokenizer.json", j.dump());
    auto t = load_hf_tokenizer_json(path);
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), "byte-fallback")) << t.status().message();
}

TEST_F(DataLoaders, HfTokenizerJsonRefusesAMergeOutsideTheAlphabet) {
    auto j = hf_tokenizer();
    j["model"]["merges"].push_back("a b c");
    const auto path = write("tokenizer.json", j.dump());
    auto t = load_hf_tokenizer_json(path);
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), path + ": merge 4 is neither")) << t.status().message();
}

TEST_F(DataLoaders, HfTokenizerJsonIgnoreMergesEmitsWholeTokens) {
    // tokenizers' BPE ignore_merges (Llama 3): a pre-token found in the vocabulary is emitted
    // as is. "bc" (259) is in the vocabulary but no merge makes it.
    auto j = hf_tokenizer();
    j["model"]["vocab"]["bc"] = 259;
    const auto plain_path = write("plain.json", j.dump());
    j["model"]["ignore_merges"] = true;
    const auto ignore_path = write("ignore.json", j.dump());
    auto plain = load_hf_tokenizer_json(plain_path);
    auto ignore = load_hf_tokenizer_json(ignore_path);
    ASSERT_TRUE(plain && ignore);
    EXPECT_EQ(encode(**plain, "bc"), (Ids{'b', 'c'}));
    EXPECT_EQ(encode(**ignore, "bc"), (Ids{259}));
}

TEST_F(DataLoaders, HfTokenizerJsonSplitRegexCutsThePieces) {
    // Llama 3 / Qwen2: Sequence[Split(Regex, Isolated), ByteLevel(use_regex=false)]. With `.`
    // every character is its own piece, so "ab" never merges.
    auto j = hf_tokenizer();
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers", nlohmann::json::array({nlohmann::json{{"type", "Split"},
                                                                {"pattern", {{"Regex", "."}}},
                                                                {"behavior", "Isolated"},
                                                                {"invert", false}},
                                                 nlohmann::json{{"type", "ByteLevel"},
                                                                {"add_prefix_space", false},
                                                                {"use_regex", false}}})}};
    const auto path = write("tokenizer.json", j.dump());
    auto t = load_hf_tokenizer_json(path);
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ(encode(**t, "ab"), (Ids{'a', 'b'}));
    j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed";
    const auto removed = write("removed.json", j.dump());
    auto r = load_hf_tokenizer_json(removed);
    ASSERT_FALSE(r);
    EXPECT_TRUE(has(r.status().message(), "Split(Regex, Isolated)")) << r.status().message();
}

TEST_F(DataLoaders, HfTokenizerJsonAcceptsNfcAndRefusesOtherNormalizers) {
    auto j = hf_tokenizer();
    j["normalizer"] = {{"type", "NFC"}};
    auto nfc = load_hf_tokenizer_json(write("nfc.json", j.dump()));
    ASSERT_TRUE(nfc) << nfc.status().message();
    EXPECT_EQ(encode(**nfc, "e\u0301"), (Ids{0xC3, 0xA9}));
    j["normalizer"] = {{"type", "Lowercase"}};
    auto lower = load_hf_tokenizer_json(write("lower.json", j.dump()));
    ASSERT_FALSE(lower);
    EXPECT_TRUE(has(lower.status().message(), "the normalizer \"Lowercase\" is not supported"))
        << lower.status().message();
}

TEST_F(DataLoaders, Gpt2FolderLoadsEncoderJsonAndVocabBpe) {
    nlohmann::json encoder = nlohmann::json::object();
    for (unsigned b = 0; b < 256; ++b) encoder[byte_level_char(static_cast<unsigned char>(b))] = b;
    encoder["ab"] = 256;
    encoder["Ġab"] = 257;
    encoder["<|endoftext|>"] = 50256;
    write("gpt2/encoder.json", encoder.dump());
    write("gpt2/vocab.bpe", "#version: 0.2\na b\nĠ ab\n");
    auto t = open_tokenizer((dir_ / "gpt2").string());
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ((*t)->kind(), "gpt2");
    EXPECT_EQ((*t)->vocab_size(), 50257u);
    EXPECT_EQ(encode(**t, "ab ab<|endoftext|>", true), (Ids{256, 257, 50256}));
}

TEST_F(DataLoaders, Gpt2VocabBpeBadLineNamesFileAndLine) {
    nlohmann::json encoder = nlohmann::json::object();
    for (unsigned b = 0; b < 256; ++b) encoder[byte_level_char(static_cast<unsigned char>(b))] = b;
    write("gpt2/encoder.json", encoder.dump());
    const auto merges = write("gpt2/vocab.bpe", "#version: 0.2\na b c\n");
    auto t = open_tokenizer((dir_ / "gpt2").string());
    ASSERT_FALSE(t);
    EXPECT_TRUE(has(t.status().message(), merges + " line 2 is not a merge"))
        << t.status().message();
}

}  // namespace
}  // namespace trainrig::data
