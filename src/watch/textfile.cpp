#include "watch/textfile.h"

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "watch/metrics_render.h"

namespace trainrig::watch {

void TextfileWriter::write(const WatchView& view) {
    const auto path = std::filesystem::path(dir_) / "trainrig.prom";
    if (Status s = write_file_atomic(path, render_metrics(view, epoch_now())); !s.ok()) {
        if (!failing_)
            std::fprintf(stderr, "trainrig watch: cannot write %s: %s\n", path.c_str(),
                         s.message().c_str());
        failing_ = true;
    } else {
        failing_ = false;
    }
}

}  // namespace trainrig::watch
