// vkscope-bench-record: how many nanoseconds one vkCmdDraw or vkCmdDispatch costs to record
// through a given stack of layers. The stack is enabled by the application, not the environment,
// because only ppEnabledLayerNames keeps its order (the first name is closest to the app).
//
// Meant to run on top of VK_LAYER_VKSCOPE_counting, which swallows the timed command: then the
// number is the cost of the layers above it, not of the driver. Nothing is ever submitted.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <latch>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>
#include <vulkan/vulkan.h>

// SPIR-V from glslangValidator --vn: bare uint32_t arrays, so they come after <cstdint>.
#include "empty_comp.h"
#include "solid_frag.h"
#include "triangle_vert.h"

namespace {

enum class Command { draw, dispatch };

struct Options {
    std::vector<std::string> layers;
    Command command = Command::draw;
    unsigned threads = 1;
    std::uint64_t calls = 2'000'000; // per thread
    std::uint32_t batch = 10'000;    // calls per command buffer
    unsigned warmup_batches = 20;
};

const char* const kUsage =
    "usage: vkscope-bench-record [--layers A,B,...] [--command draw|dispatch] [--threads N]\n"
    "                            [--calls M] [--batch K] [--warmup-batches W]\n"
    "Times M calls per thread of vkCmdDraw (inside a render pass) or vkCmdDispatch, recorded\n"
    "in command buffers of K calls, and prints one JSON line. --layers are enabled in order,\n"
    "the first closest to the application.\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "vkscope-bench-record: %s\n%s", message.c_str(), kUsage);
    std::exit(2);
}

template <typename T> T parse_number(std::string_view text, const char* option) {
    T value{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value == 0) {
        usage_error(std::string(option) + " needs a positive integer, got '" + std::string(text) +
                    "'");
    }
    return value;
}

Options parse_options(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        }
        if (i + 1 >= argc) {
            usage_error("unknown or incomplete option '" + std::string(arg) + "'");
        }
        std::string_view value = argv[++i];
        if (arg == "--layers") {
            options.layers.clear();
            while (!value.empty()) {
                std::size_t comma = value.find(',');
                std::string_view name = value.substr(0, comma);
                if (!name.empty()) {
                    options.layers.emplace_back(name);
                }
                value =
                    comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
            }
        } else if (arg == "--command") {
            if (value == "draw" || value == "vkCmdDraw") {
                options.command = Command::draw;
            } else if (value == "dispatch" || value == "vkCmdDispatch") {
                options.command = Command::dispatch;
            } else {
                usage_error("--command is draw or dispatch, got '" + std::string(value) + "'");
            }
        } else if (arg == "--threads") {
            options.threads = parse_number<unsigned>(value, "--threads");
        } else if (arg == "--calls") {
            options.calls = parse_number<std::uint64_t>(value, "--calls");
        } else if (arg == "--batch") {
            options.batch = parse_number<std::uint32_t>(value, "--batch");
        } else if (arg == "--warmup-batches") {
            options.warmup_batches = parse_number<unsigned>(value, "--warmup-batches");
        } else {
            usage_error("unknown option '" + std::string(arg) + "'");
        }
    }
    return options;
}

void check(VkResult result, const char* what) {
    if (result != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed with VkResult " +
                                 std::to_string(static_cast<int>(result)));
    }
}

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// Device commands as an engine using volk holds them: straight from vkGetDeviceProcAddr, so each
// call enters the first layer directly instead of going through the loader's trampoline.
struct DeviceCommands {
    PFN_vkCmdDraw draw = nullptr;
    PFN_vkCmdDispatch dispatch = nullptr;
    PFN_vkCmdBindPipeline bind_pipeline = nullptr;
    PFN_vkCmdBeginRenderPass begin_render_pass = nullptr;
    PFN_vkCmdEndRenderPass end_render_pass = nullptr;
    PFN_vkBeginCommandBuffer begin = nullptr;
    PFN_vkEndCommandBuffer end = nullptr;
    PFN_vkResetCommandPool reset_pool = nullptr;

    void load(PFN_vkGetDeviceProcAddr gdpa, VkDevice device) {
        auto get = [&](auto& slot, const char* name) {
            slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(gdpa(device, name));
            if (!slot) {
                throw std::runtime_error(std::string("vkGetDeviceProcAddr(") + name +
                                         ") returned null");
            }
        };
        get(draw, "vkCmdDraw");
        get(dispatch, "vkCmdDispatch");
        get(bind_pipeline, "vkCmdBindPipeline");
        get(begin_render_pass, "vkCmdBeginRenderPass");
        get(end_render_pass, "vkCmdEndRenderPass");
        get(begin, "vkBeginCommandBuffer");
        get(end, "vkEndCommandBuffer");
        get(reset_pool, "vkResetCommandPool");
    }
};

constexpr VkExtent2D kExtent{16, 16};
constexpr VkFormat kColorFormat = VK_FORMAT_R8G8B8A8_UNORM;

// Everything the recording threads share, created once and destroyed in reverse.
class Context {
public:
    explicit Context(const Options& options) : options_(options) {
        create_instance();
        pick_physical_device();
        create_device();
        if (options.command == Command::draw) {
            create_render_target();
            create_graphics_pipeline();
        } else {
            create_compute_pipeline();
        }
    }
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    ~Context() {
        if (device_) {
            vkDestroyPipeline(device_, pipeline_, nullptr);
            vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
            vkDestroyFramebuffer(device_, framebuffer_, nullptr);
            vkDestroyRenderPass(device_, render_pass_, nullptr);
            vkDestroyImageView(device_, view_, nullptr);
            vkDestroyImage(device_, image_, nullptr);
            vkFreeMemory(device_, memory_, nullptr);
            vkDestroyDevice(device_, nullptr);
        }
        if (instance_) {
            vkDestroyInstance(instance_, nullptr);
        }
    }

    VkDevice device() const { return device_; }
    std::uint32_t queue_family() const { return queue_family_; }
    VkRenderPass render_pass() const { return render_pass_; }
    VkFramebuffer framebuffer() const { return framebuffer_; }
    VkPipeline pipeline() const { return pipeline_; }
    const DeviceCommands& commands() const { return commands_; }
    const std::string& device_name() const { return device_name_; }
    const std::string& driver_name() const { return driver_name_; }
    const std::string& driver_info() const { return driver_info_; }

private:
    void create_instance() {
        std::uint32_t count = 0;
        check(vkEnumerateInstanceLayerProperties(&count, nullptr),
              "vkEnumerateInstanceLayerProperties");
        std::vector<VkLayerProperties> available(count);
        check(vkEnumerateInstanceLayerProperties(&count, available.data()),
              "vkEnumerateInstanceLayerProperties");
        std::vector<const char*> names;
        for (const std::string& layer : options_.layers) {
            bool found = std::any_of(available.begin(), available.end(),
                                     [&](const auto& p) { return layer == p.layerName; });
            if (!found) {
                // Far more likely a missing VK_ADD_LAYER_PATH entry than anything else.
                throw std::runtime_error("layer " + layer +
                                         " is not available; is its folder in VK_ADD_LAYER_PATH?");
            }
            names.push_back(layer.c_str());
        }
        VkApplicationInfo app{.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                              .pApplicationName = "vkscope-bench-record",
                              .apiVersion = VK_API_VERSION_1_2};
        VkInstanceCreateInfo info{.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                  .pApplicationInfo = &app,
                                  .enabledLayerCount = static_cast<std::uint32_t>(names.size()),
                                  .ppEnabledLayerNames = names.data()};
        check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
    }

    void pick_physical_device() {
        std::uint32_t count = 0;
        check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
        std::vector<VkPhysicalDevice> devices(count);
        check(vkEnumeratePhysicalDevices(instance_, &count, devices.data()),
              "vkEnumeratePhysicalDevices");
        constexpr VkQueueFlags wanted = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
        for (VkPhysicalDevice candidate : devices) {
            std::uint32_t families = 0;
            vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, nullptr);
            std::vector<VkQueueFamilyProperties> props(families);
            vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, props.data());
            for (std::uint32_t i = 0; i < families; ++i) {
                if ((props[i].queueFlags & wanted) == wanted) {
                    physical_device_ = candidate;
                    queue_family_ = i;
                    break;
                }
            }
            if (physical_device_) {
                break;
            }
        }
        if (!physical_device_) {
            throw std::runtime_error("no Vulkan device with a graphics and compute queue");
        }
        VkPhysicalDeviceDriverProperties driver{
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
        VkPhysicalDeviceProperties2 props{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                          .pNext = &driver};
        vkGetPhysicalDeviceProperties2(physical_device_, &props);
        device_name_ = props.properties.deviceName;
        driver_name_ = driver.driverName;
        driver_info_ = driver.driverInfo;
    }

    void create_device() {
        float priority = 1.0f;
        VkDeviceQueueCreateInfo queue{.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                      .queueFamilyIndex = queue_family_,
                                      .queueCount = 1,
                                      .pQueuePriorities = &priority};
        VkDeviceCreateInfo info{.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                .queueCreateInfoCount = 1,
                                .pQueueCreateInfos = &queue};
        check(vkCreateDevice(physical_device_, &info, nullptr, &device_), "vkCreateDevice");
        auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
            vkGetInstanceProcAddr(instance_, "vkGetDeviceProcAddr"));
        commands_.load(gdpa, device_);
    }

    void create_render_target() {
        VkImageCreateInfo image{.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
                                .imageType = VK_IMAGE_TYPE_2D,
                                .format = kColorFormat,
                                .extent = {kExtent.width, kExtent.height, 1},
                                .mipLevels = 1,
                                .arrayLayers = 1,
                                .samples = VK_SAMPLE_COUNT_1_BIT,
                                .tiling = VK_IMAGE_TILING_OPTIMAL,
                                .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
                                .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
                                .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED};
        check(vkCreateImage(device_, &image, nullptr, &image_), "vkCreateImage");
        VkMemoryRequirements needs;
        vkGetImageMemoryRequirements(device_, image_, &needs);
        VkPhysicalDeviceMemoryProperties memory;
        vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory);
        std::uint32_t type = 0;
        while (type < memory.memoryTypeCount && !(needs.memoryTypeBits & (1u << type))) {
            ++type;
        }
        if (type == memory.memoryTypeCount) {
            throw std::runtime_error("no memory type for the colour attachment");
        }
        VkMemoryAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                   .allocationSize = needs.size,
                                   .memoryTypeIndex = type};
        check(vkAllocateMemory(device_, &alloc, nullptr, &memory_), "vkAllocateMemory");
        check(vkBindImageMemory(device_, image_, memory_, 0), "vkBindImageMemory");
        VkImageViewCreateInfo view{.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
                                   .image = image_,
                                   .viewType = VK_IMAGE_VIEW_TYPE_2D,
                                   .format = kColorFormat,
                                   .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
        check(vkCreateImageView(device_, &view, nullptr, &view_), "vkCreateImageView");

        VkAttachmentDescription color{.format = kColorFormat,
                                      .samples = VK_SAMPLE_COUNT_1_BIT,
                                      .loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                      .storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                      .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                      .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                      .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                                      .finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
        VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
        VkSubpassDescription subpass{.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
                                     .colorAttachmentCount = 1,
                                     .pColorAttachments = &ref};
        VkRenderPassCreateInfo pass{.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
                                    .attachmentCount = 1,
                                    .pAttachments = &color,
                                    .subpassCount = 1,
                                    .pSubpasses = &subpass};
        check(vkCreateRenderPass(device_, &pass, nullptr, &render_pass_), "vkCreateRenderPass");
        VkFramebufferCreateInfo fb{.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
                                   .renderPass = render_pass_,
                                   .attachmentCount = 1,
                                   .pAttachments = &view_,
                                   .width = kExtent.width,
                                   .height = kExtent.height,
                                   .layers = 1};
        check(vkCreateFramebuffer(device_, &fb, nullptr, &framebuffer_), "vkCreateFramebuffer");
    }

    VkShaderModule shader(const std::uint32_t* code, std::size_t bytes) {
        VkShaderModuleCreateInfo info{
            .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = bytes, .pCode = code};
        VkShaderModule module = VK_NULL_HANDLE;
        check(vkCreateShaderModule(device_, &info, nullptr, &module), "vkCreateShaderModule");
        return module;
    }

    void create_pipeline_layout() {
        VkPipelineLayoutCreateInfo info{.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        check(vkCreatePipelineLayout(device_, &info, nullptr, &pipeline_layout_),
              "vkCreatePipelineLayout");
    }

    void create_graphics_pipeline() {
        create_pipeline_layout();
        VkShaderModule vert = shader(triangle_vert, sizeof triangle_vert);
        VkShaderModule frag = shader(solid_frag, sizeof solid_frag);
        VkPipelineShaderStageCreateInfo stages[2] = {
            {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
             .stage = VK_SHADER_STAGE_VERTEX_BIT,
             .module = vert,
             .pName = "main"},
            {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
             .stage = VK_SHADER_STAGE_FRAGMENT_BIT,
             .module = frag,
             .pName = "main"}};
        VkPipelineVertexInputStateCreateInfo input{
            .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
        VkPipelineInputAssemblyStateCreateInfo assembly{
            .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
            .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST};
        VkViewport viewport{0.0f, 0.0f, float(kExtent.width), float(kExtent.height), 0.0f, 1.0f};
        VkRect2D scissor{{0, 0}, kExtent};
        VkPipelineViewportStateCreateInfo viewports{
            .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
            .viewportCount = 1,
            .pViewports = &viewport,
            .scissorCount = 1,
            .pScissors = &scissor};
        VkPipelineRasterizationStateCreateInfo raster{
            .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
            .polygonMode = VK_POLYGON_MODE_FILL,
            .cullMode = VK_CULL_MODE_NONE,
            .frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE,
            .lineWidth = 1.0f};
        VkPipelineMultisampleStateCreateInfo multisample{
            .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
            .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT};
        VkPipelineColorBlendAttachmentState blend_attachment{
            .colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                              VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT};
        VkPipelineColorBlendStateCreateInfo blend{
            .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
            .attachmentCount = 1,
            .pAttachments = &blend_attachment};
        VkGraphicsPipelineCreateInfo info{.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                          .stageCount = 2,
                                          .pStages = stages,
                                          .pVertexInputState = &input,
                                          .pInputAssemblyState = &assembly,
                                          .pViewportState = &viewports,
                                          .pRasterizationState = &raster,
                                          .pMultisampleState = &multisample,
                                          .pColorBlendState = &blend,
                                          .layout = pipeline_layout_,
                                          .renderPass = render_pass_,
                                          .subpass = 0};
        VkResult result =
            vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_);
        vkDestroyShaderModule(device_, vert, nullptr);
        vkDestroyShaderModule(device_, frag, nullptr);
        check(result, "vkCreateGraphicsPipelines");
    }

    void create_compute_pipeline() {
        create_pipeline_layout();
        VkShaderModule comp = shader(empty_comp, sizeof empty_comp);
        VkComputePipelineCreateInfo info{
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = comp,
                      .pName = "main"},
            .layout = pipeline_layout_};
        VkResult result =
            vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_);
        vkDestroyShaderModule(device_, comp, nullptr);
        check(result, "vkCreateComputePipelines");
    }

    const Options& options_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
    std::uint32_t queue_family_ = 0;
    VkDevice device_ = VK_NULL_HANDLE;
    DeviceCommands commands_;
    VkImage image_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    VkImageView view_ = VK_NULL_HANDLE;
    VkRenderPass render_pass_ = VK_NULL_HANDLE;
    VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
    VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    std::string device_name_;
    std::string driver_name_;
    std::string driver_info_;
};

// One thread's command pool and command buffer; pools are externally synchronised, so sharing
// one between threads would measure the application's locking instead of the layers.
class Recorder {
public:
    Recorder(const Context& context, Command command) : context_(context), command_(command) {
        VkCommandPoolCreateInfo pool{.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                     .queueFamilyIndex = context.queue_family()};
        check(vkCreateCommandPool(context.device(), &pool, nullptr, &pool_), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                          .commandPool = pool_,
                                          .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                          .commandBufferCount = 1};
        check(vkAllocateCommandBuffers(context.device(), &alloc, &cb_), "vkAllocateCommandBuffers");
    }
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;
    ~Recorder() { vkDestroyCommandPool(context_.device(), pool_, nullptr); }

    // Records one command buffer holding `calls` of the benchmarked command and returns the time
    // spent in those calls alone: begin, bind, render pass and reset are the driver's cost, the
    // same with or without layers above the counting one, and would only add noise.
    std::chrono::nanoseconds record_batch(std::uint32_t calls) {
        const DeviceCommands& vk = context_.commands();
        check(vk.reset_pool(context_.device(), pool_, 0), "vkResetCommandPool");
        VkCommandBufferBeginInfo begin{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        check(vk.begin(cb_, &begin), "vkBeginCommandBuffer");
        std::chrono::steady_clock::time_point start;
        std::chrono::steady_clock::time_point stop;
        if (command_ == Command::draw) {
            VkRenderPassBeginInfo pass{.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                                       .renderPass = context_.render_pass(),
                                       .framebuffer = context_.framebuffer(),
                                       .renderArea = {{0, 0}, kExtent}};
            vk.begin_render_pass(cb_, &pass, VK_SUBPASS_CONTENTS_INLINE);
            vk.bind_pipeline(cb_, VK_PIPELINE_BIND_POINT_GRAPHICS, context_.pipeline());
            PFN_vkCmdDraw draw = vk.draw;
            start = std::chrono::steady_clock::now();
            for (std::uint32_t i = 0; i < calls; ++i) {
                draw(cb_, 3, 1, 0, 0);
            }
            stop = std::chrono::steady_clock::now();
            vk.end_render_pass(cb_);
        } else {
            vk.bind_pipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, context_.pipeline());
            PFN_vkCmdDispatch dispatch = vk.dispatch;
            start = std::chrono::steady_clock::now();
            for (std::uint32_t i = 0; i < calls; ++i) {
                dispatch(cb_, 1, 1, 1);
            }
            stop = std::chrono::steady_clock::now();
        }
        check(vk.end(cb_), "vkEndCommandBuffer");
        return stop - start;
    }

private:
    const Context& context_;
    Command command_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cb_ = VK_NULL_HANDLE;
};

struct ThreadResult {
    std::chrono::nanoseconds elapsed{0};
    std::exception_ptr error;
};

void run_thread(const Context& context, const Options& options, std::latch& ready,
                ThreadResult& result) {
    // Every thread must reach the latch, even on failure, or the others would wait forever.
    bool arrived = false;
    try {
        Recorder recorder(context, options.command);
        for (unsigned i = 0; i < options.warmup_batches; ++i) {
            recorder.record_batch(options.batch);
        }
        arrived = true;
        ready.arrive_and_wait();
        for (std::uint64_t left = options.calls; left > 0;) {
            auto calls = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, options.batch));
            result.elapsed += recorder.record_batch(calls);
            left -= calls;
        }
    } catch (...) {
        result.error = std::current_exception();
        if (!arrived) {
            ready.count_down();
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    Options options = parse_options(argc, argv);
    try {
        Context context(options);
        std::vector<ThreadResult> results(options.threads);
        std::latch ready(options.threads);
        {
            std::vector<std::jthread> threads;
            for (unsigned t = 0; t < options.threads; ++t) {
                threads.emplace_back(run_thread, std::cref(context), std::cref(options),
                                     std::ref(ready), std::ref(results[t]));
            }
        }
        std::string per_thread;
        double sum = 0.0;
        for (const ThreadResult& r : results) {
            if (r.error) {
                std::rethrow_exception(r.error);
            }
            double ns = double(r.elapsed.count()) / double(options.calls);
            sum += ns;
            char number[32];
            std::snprintf(number, sizeof number, "%s%.4f", per_thread.empty() ? "" : ", ", ns);
            per_thread += number;
        }
        std::string layers;
        for (const std::string& layer : options.layers) {
            layers += (layers.empty() ? "" : ", ") + json_string(layer);
        }
        std::printf("{\"command\": %s, \"threads\": %u, \"calls\": %llu, \"ns_per_call\": %.4f, "
                    "\"ns_per_call_by_thread\": [%s], \"batch\": %u, \"layers\": [%s], "
                    "\"device\": %s, \"driver\": %s, \"driver_info\": %s}\n",
                    options.command == Command::draw ? "\"vkCmdDraw\"" : "\"vkCmdDispatch\"",
                    options.threads, static_cast<unsigned long long>(options.calls),
                    sum / options.threads, per_thread.c_str(), options.batch, layers.c_str(),
                    json_string(context.device_name()).c_str(),
                    json_string(context.driver_name()).c_str(),
                    json_string(context.driver_info()).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vkscope-bench-record: %s\n", e.what());
        return 1;
    }
    return 0;
}
