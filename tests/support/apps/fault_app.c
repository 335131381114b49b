/* A small Vulkan application for the fault tests: each frame fills a buffer (one transfer
 * workload) and waits for it. Run with the layer's frame_submits=1, every submission ends a frame.
 *
 *   fault_app frames N               N frames, then a clean exit
 *   fault_app fork N                 creates its instance, forks; the child creates its own
 *                                    instance and runs N frames, as the parent does on its own
 *   fault_app crash SIGNAL N [own]   N frames, then dies of SIGNAL (segv, bus, ill, fpe, abrt)
 *                                    the way a real bug does; `own`: with a handler of its own
 *                                    for it, installed before the instance, which prints a line
 *                                    and exits 42
 *   fault_app labels N LABEL...      N frames, each fill inside the debug labels given, nested
 *                                    in that order (VK_EXT_debug_utils): whatever bytes they hold
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        VkResult r_ = (call);                                                                      \
        if (r_ != VK_SUCCESS) {                                                                    \
            fprintf(stderr, "fault_app: %s failed: %d\n", #call, (int)r_);                         \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

/* The debug labels each frame's fill is recorded inside (`labels` mode), outermost first. */
static int label_count = 0;
static char** labels = NULL;

static VkInstance make_instance(void) {
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "fault_app";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    const char* debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    if (label_count > 0) {
        info.enabledExtensionCount = 1;
        info.ppEnabledExtensionNames = &debug_utils;
    }
    VkInstance instance;
    CHECK(vkCreateInstance(&info, NULL, &instance));
    return instance;
}

static void die_of(const char* name);

/* Runs `frames` frames on the instance's first device, then destroys what it made; or, with
 * `crash`, dies of it there, its device still alive. */
static void run_frames(VkInstance instance, unsigned frames, const char* crash) {
    uint32_t n = 1;
    VkPhysicalDevice physical;
    VkResult listed = vkEnumeratePhysicalDevices(instance, &n, &physical);
    if ((listed != VK_SUCCESS && listed != VK_INCOMPLETE) || n == 0) {
        fprintf(stderr, "fault_app: no Vulkan device\n");
        exit(3);
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = 0; /* lavapipe and every GPU: graphics, compute and transfer */
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    VkDevice device;
    CHECK(vkCreateDevice(physical, &device_info, NULL, &device));
    VkQueue queue;
    vkGetDeviceQueue(device, 0, 0, &queue);

    VkBufferCreateInfo buffer_info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    buffer_info.size = 4096;
    buffer_info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer buffer;
    CHECK(vkCreateBuffer(device, &buffer_info, NULL, &buffer));
    VkMemoryRequirements needs;
    vkGetBufferMemoryRequirements(device, buffer, &needs);
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = needs.size;
    alloc.memoryTypeIndex = (uint32_t)__builtin_ctz(needs.memoryTypeBits);
    VkDeviceMemory memory;
    CHECK(vkAllocateMemory(device, &alloc, NULL, &memory));
    CHECK(vkBindBufferMemory(device, buffer, memory, 0));

    VkCommandPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(device, &pool_info, NULL, &pool));
    VkCommandBufferAllocateInfo cb_info = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cb_info.commandPool = pool;
    cb_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cb_info.commandBufferCount = 1;
    VkCommandBuffer cb;
    CHECK(vkAllocateCommandBuffers(device, &cb_info, &cb));
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(device, &fence_info, NULL, &fence));
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label = NULL;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label = NULL;
    if (label_count > 0) {
        begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(
            instance, "vkCmdBeginDebugUtilsLabelEXT");
        end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetInstanceProcAddr(
            instance, "vkCmdEndDebugUtilsLabelEXT");
        if (!begin_label || !end_label) {
            fprintf(stderr, "fault_app: no VK_EXT_debug_utils label commands\n");
            exit(3);
        }
    }

    for (unsigned frame = 0; frame < frames; ++frame) {
        VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        CHECK(vkBeginCommandBuffer(cb, &begin));
        for (int i = 0; i < label_count; ++i) {
            VkDebugUtilsLabelEXT label = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
            label.pLabelName = labels[i];
            begin_label(cb, &label);
        }
        vkCmdFillBuffer(cb, buffer, 0, VK_WHOLE_SIZE, frame);
        for (int i = 0; i < label_count; ++i) {
            end_label(cb);
        }
        CHECK(vkEndCommandBuffer(cb));
        VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cb;
        CHECK(vkQueueSubmit(queue, 1, &submit, fence));
        CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
        CHECK(vkResetFences(device, 1, &fence));
    }
    if (crash) {
        die_of(crash);
    }
    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyBuffer(device, buffer, NULL);
    vkFreeMemory(device, memory, NULL);
    vkDestroyDevice(device, NULL);
}

static int fork_mode(unsigned frames) {
    VkInstance parent = make_instance();
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        perror("fault_app: fork");
        return 3;
    }
    if (child == 0) {
        VkInstance own = make_instance();
        run_frames(own, frames, NULL);
        vkDestroyInstance(own, NULL);
        printf("child %d ran %u frames\n", (int)getpid(), frames);
        fflush(NULL);
        /* exit(), not _exit(): the child ends as a process does, at-exit work included. */
        exit(0);
    }
    run_frames(parent, frames, NULL);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fault_app: the child ended with status %d\n", status);
        return 4;
    }
    vkDestroyInstance(parent, NULL);
    printf("parent %d ran %u frames\n", (int)getpid(), frames);
    return 0;
}

static void own_handler(int signo) {
    static const char said[] = "fault_app: its own handler ran\n";
    (void)signo;
    if (write(STDOUT_FILENO, said, sizeof said - 1) < 0) {
        _exit(43);
    }
    _exit(42);
}

/* Volatile, so that the compiler keeps each fault where it is written. */
static volatile int zero = 0;
static int* volatile nowhere = NULL;

static void die_of(const char* name) {
    fflush(NULL);
    if (strcmp(name, "segv") == 0) {
        *nowhere = 1; /* a fault: the kernel sends SIGSEGV to this thread */
    } else if (strcmp(name, "fpe") == 0) {
        raise(SIGFPE); /* an integer division by zero traps on x86 only: raise it everywhere */
    } else if (strcmp(name, "ill") == 0) {
        __builtin_trap(); /* SIGILL on x86 (ud2), SIGTRAP or SIGILL elsewhere */
    } else if (strcmp(name, "bus") == 0) {
        raise(SIGBUS);
    } else if (strcmp(name, "abrt") == 0) {
        abort();
    }
    fprintf(stderr, "fault_app: still alive after %s (zero=%d)\n", name, zero);
    exit(5);
}

static int signal_of(const char* name) {
    const char* names[] = {"segv", "bus", "ill", "fpe", "abrt"};
    const int numbers[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (int i = 0; i < 5; ++i) {
        if (strcmp(name, names[i]) == 0) {
            return numbers[i];
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 3 && strcmp(argv[1], "frames") == 0) {
        VkInstance instance = make_instance();
        run_frames(instance, (unsigned)atoi(argv[2]), NULL);
        vkDestroyInstance(instance, NULL);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "labels") == 0) {
        label_count = argc - 3;
        labels = argv + 3;
        VkInstance instance = make_instance();
        run_frames(instance, (unsigned)atoi(argv[2]), NULL);
        vkDestroyInstance(instance, NULL);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "fork") == 0) {
        return fork_mode((unsigned)atoi(argv[2]));
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "crash") == 0 && signal_of(argv[2])) {
        if (argc == 5 && strcmp(argv[4], "own") == 0) {
            struct sigaction action;
            memset(&action, 0, sizeof action);
            action.sa_handler = own_handler;
            sigaction(signal_of(argv[2]), &action, NULL);
        }
        run_frames(make_instance(), (unsigned)atoi(argv[3]), argv[2]);
    }
    fprintf(stderr, "usage: fault_app frames N | fork N | crash segv|bus|ill|fpe|abrt N [own] | "
                    "labels N LABEL...\n");
    return 2;
}
