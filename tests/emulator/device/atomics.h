// Atomic functions for device code compiled by the host compiler: std::atomic_ref, since the
// blocks of a grid run on several host threads. Floating-point ones tell the race check that
// the kernel's sums depend on the order of its threads.
#pragma once

#include <atomic>
#include <type_traits>

#include "device/launch.h"

template <class T>
T atomicAdd(T* address, T value) {
    static_assert(std::is_arithmetic_v<T>, "atomicAdd on a number");
    if constexpr (std::is_floating_point_v<T>) trainrig::emu::note_float_atomic();
    return std::atomic_ref<T>(*address).fetch_add(value);
}

template <class T>
T atomicMax(T* address, T value) {
    std::atomic_ref<T> a(*address);
    T old = a.load();
    while (old < value && !a.compare_exchange_weak(old, value)) {
    }
    return old;
}

template <class T>
T atomicCAS(T* address, T compare, T value) {
    std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
    return compare;
}

template <class T>
T atomicExch(T* address, T value) {
    return std::atomic_ref<T>(*address).exchange(value);
}
