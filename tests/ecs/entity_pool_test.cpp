// registry::entity_pool() and restore_entity_pool(): a registry's entity slots, live and free, copied and
// brought back into another registry, which then hands out the same identifiers; inconsistent images are
// refused without changing anything.

#include <vector>

#include <gtest/gtest.h>

#include <ecsnet/ecs/registry.hpp>

namespace entity_pool_test {

namespace {

using namespace ecsnet;

struct position {
    float x{};
};

// Slots 0..9 created, then 3, 7 and 5 destroyed (in that order, so the free list is 5, 7, 3), 7 reused.
registry& churned(registry& reg) {
    std::vector<entity> all;
    for (int i = 0; i < 10; ++i) {
        all.push_back(reg.create());
        reg.emplace<position>(all.back(), static_cast<float>(i));
    }
    reg.destroy(all[3]);
    reg.destroy(all[7]);
    reg.destroy(all[5]);
    static_cast<void>(reg.create()); // slot 5, version 1
    reg.destroy(reg.current(5));     // slot 5 again, now version 2 on the free list
    return reg;
}

TEST(EntityPool, RestoredRegistryHasTheSameEntitiesAndHandsOutTheSameNext) {
    registry original;
    churned(original);
    const auto image = original.entity_pool();
    EXPECT_EQ(live_entities(image), original.alive());

    registry restored;
    static_cast<void>(restored.create()); // something there before: cleared first
    restored.clear();
    restored.restore_entity_pool(image);
    EXPECT_EQ(restored.entity_pool(), image);
    EXPECT_EQ(restored.alive(), original.alive());
    for (std::uint32_t index = 0; index < 10; ++index) {
        EXPECT_EQ(restored.current(index), original.current(index)) << index;
    }
    // Components go in afterwards as usual.
    restored.emplace<position>(restored.current(9), 9.0F);
    EXPECT_EQ(restored.get<position>(restored.current(9)).x, 9.0F);
    // The free list comes back too: the next identifiers are the original's.
    for (int i = 0; i < 5; ++i) {
        const auto a = original.create();
        const auto b = restored.create();
        EXPECT_EQ(a, b) << i;
    }
}

TEST(EntityPool, ALiveRegistryIsRefused) {
    registry reg;
    const auto kept = reg.create();
    EXPECT_THROW(reg.restore_entity_pool(entity_pool_image{}), std::invalid_argument);
    EXPECT_TRUE(reg.valid(kept));
}

TEST(EntityPool, InconsistentImagesAreRefusedAndChangeNothing) {
    registry source;
    churned(source);
    const auto good = source.entity_pool();

    auto looping = good; // a free slot pointing back at the head
    looping.slots[3] = entity_traits::construct(5, to_version(looping.slots[3]));
    auto missing = good; // the list ends early: slot 3 is free yet not on it
    missing.slots[7] = entity_traits::construct(entity_traits::index_mask, to_version(missing.slots[7]));
    auto outside = good; // the head names a slot past the end
    outside.free_head = 42;

    for (const auto* bad : {&looping, &missing, &outside}) {
        EXPECT_TRUE(entity_pool_image_error(*bad, registry::max_entities()).has_value());
        registry reg;
        EXPECT_THROW(reg.restore_entity_pool(*bad), std::invalid_argument);
        EXPECT_EQ(reg.alive(), 0U);
        EXPECT_TRUE(reg.entity_pool().slots.empty());
    }
    EXPECT_FALSE(entity_pool_image_error(good, registry::max_entities()).has_value());
}

} // namespace

} // namespace entity_pool_test
