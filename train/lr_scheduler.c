/* Learning-rate schedulers (python/mxnet/lr_scheduler.py). */
#include <string.h>

#include "train_internal.h"

/**
 * Checks the step and factor of a scheduler as upstream's constructors do
 * (ValueError texts); `increasing`: the step follows a smaller one.
 */
static mxk_status sched_check(int64_t step, int increasing, double factor) {
    if (!increasing)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "Schedule step must be an increasing integer list");
    if (step < 1)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "Schedule step must be greater or equal than 1 round");
    if (factor > 1.0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "Factor must be no more than 1 to make lr reduce");
    return MXK_OK;
}

/** Starts `s` as a scheduler of `kind` at base_lr (state cleared). */
static void sched_start(mxkt_lr_scheduler *s, int32_t kind, double factor, double base_lr) {
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->factor = factor;
    s->stop_factor_lr = 1e-8;
    s->base_lr = s->lr = base_lr;
}

/** FactorScheduler(step, factor, stop_factor_lr=1e-8, base_lr) (lr_scheduler.py). */
mxk_status mxkt_lr_factor(mxkt_lr_scheduler *s, int64_t step, double factor, double base_lr) {
    MXKT_CHECK(sched_check(step, 1, factor));
    sched_start(s, MXKT_SCHED_FACTOR, factor, base_lr);
    s->step = step;
    return MXK_OK;
}

/** MultiFactorScheduler(step=[...], factor, base_lr) (lr_scheduler.py). */
mxk_status mxkt_lr_multifactor(mxkt_lr_scheduler *s, const int64_t *steps, int32_t n, double factor,
                               double base_lr) {
    if (n < 1 || n > MXKT_MAX_STEPS)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "MultiFactorScheduler: 1 to %d steps needed",
                          MXKT_MAX_STEPS);
    for (int32_t i = 0; i < n; i++) /* every step first, then the factor (upstream's order) */
        MXKT_CHECK(sched_check(steps[i], i == 0 || steps[i] > steps[i - 1], 1.0));
    MXKT_CHECK(sched_check(1, 1, factor));
    sched_start(s, MXKT_SCHED_MULTIFACTOR, factor, base_lr);
    for (int32_t i = 0; i < n; i++)
        s->steps[i] = steps[i];
    s->num_steps = n;
    return MXK_OK;
}

/** The scheduler's rate at num_update (upstream __call__, stateful). */
double mxkt_lr_get(mxkt_lr_scheduler *s, int64_t num_update) {
    if (s->kind == MXKT_SCHED_FACTOR) {
        while (num_update > s->count + s->step) {
            s->count += s->step;
            s->lr *= s->factor;
            if (s->lr < s->stop_factor_lr)
                s->lr = s->stop_factor_lr;
        }
    } else if (s->kind == MXKT_SCHED_MULTIFACTOR) {
        while (s->cur_step_ind < s->num_steps && num_update > s->steps[s->cur_step_ind]) {
            s->count = s->steps[s->cur_step_ind];
            s->cur_step_ind++;
            s->lr *= s->factor;
        }
    }
    return s->lr;
}
