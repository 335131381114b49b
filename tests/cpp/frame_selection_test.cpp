// The `frames` setting.

#include "core/frame_selection.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace vkscope {
namespace {

FrameSelection parsed(const char* text) {
    FrameSelection s;
    std::string why;
    EXPECT_TRUE(s.parse(text, why)) << text << ": " << why;
    return s;
}

TEST(FrameSelection, EmptyIsEveryFrame) {
    const FrameSelection s = parsed("  ");
    EXPECT_TRUE(s.every_frame());
    EXPECT_TRUE(s.selects(0));
    EXPECT_TRUE(s.selects(123456));
}

TEST(FrameSelection, ListsAndRanges) {
    const FrameSelection s = parsed("3, 10-12,100-");
    for (uint64_t f : {3, 10, 11, 12, 100, 5000}) {
        EXPECT_TRUE(s.selects(f)) << f;
    }
    for (uint64_t f : {0, 2, 4, 9, 13, 99}) {
        EXPECT_FALSE(s.selects(f)) << f;
    }
}

TEST(FrameSelection, EveryNth) {
    const FrameSelection s = parsed("every:3");
    EXPECT_TRUE(s.selects(0));
    EXPECT_FALSE(s.selects(1));
    EXPECT_FALSE(s.selects(2));
    EXPECT_TRUE(s.selects(3));
}

TEST(FrameSelection, TriggerFollowsTheFile) {
    char path[] = "/tmp/vkscope-trigger-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    const FrameSelection s = parsed((std::string("trigger:") + path).c_str());
    EXPECT_TRUE(s.selects(0));
    std::remove(path);
    EXPECT_FALSE(s.selects(1));
}

TEST(FrameSelection, HostSelectsOnlyWhatTheCaptureServerAsksFor) {
    const FrameSelection s = parsed("host");
    EXPECT_TRUE(s.server_driven());
    EXPECT_FALSE(s.selects(0));
    EXPECT_FALSE(s.selects(7));
    EXPECT_FALSE(parsed("every:2").server_driven());
}

TEST(FrameSelection, MistakesAreRefusedWithAReason) {
    for (const char* bad : {"every:0", "every:x", "trigger:", "3-1", "a", "1,,2", "-5", "1-2-3"}) {
        FrameSelection s;
        std::string why;
        EXPECT_FALSE(s.parse(bad, why)) << bad;
        EXPECT_FALSE(why.empty()) << bad;
        EXPECT_TRUE(s.every_frame()) << bad;
    }
}

} // namespace
} // namespace vkscope
