/* A broken sampler plugin for vkscope's tests: a library without vkscope_sampler_entry. */
int vkscope_not_a_sampler(void) {
    return 1;
}
