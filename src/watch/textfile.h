// The metrics as a file for node_exporter's textfile collector (`watch --textfile DIR`):
// DIR/trainrig.prom, written whole each tick. A failed write is said once per failure streak,
// not every tick, and watching goes on.
#pragma once

#include <string>

#include "watch/watch_view.h"

namespace trainrig::watch {

class TextfileWriter {
public:
    explicit TextfileWriter(std::string dir) : dir_(std::move(dir)) {}
    void write(const WatchView& view);

private:
    std::string dir_;
    bool failing_ = false;
};

}  // namespace trainrig::watch
