/* pre_regex_internal.h - the compiled form of a pre-tokenizer regex, shared by its compiler
 * (pre_regex_compile.c) and its matcher (pre_regex.c). Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_PRE_REGEX_INTERNAL_H
#define INF_VOCAB_PRE_REGEX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pre_regex.h"

enum { MAX_UNITS = 4096, MAX_NODES = 1024, MAX_CLASSES = 128, MAX_RANGES = 256, MAX_INSTS = 8192 };
enum { UNBOUNDED = -1 };

/* A character class: a bitmap for units below 256, ranges above, and "every unit from 256" for
 * the negated escapes (\S \D \W), which only matter when units are code points. */
typedef struct char_class {
    uint8_t low[32];
    bool all_high;
    bool negated;
    int n_ranges;
    uint32_t ranges[MAX_RANGES][2];
} char_class;

typedef enum op { I_CLASS, I_RUN, I_SPLIT, I_JMP, I_EOL, I_LOOK, I_MATCH } op;

typedef struct inst {
    uint8_t op;
    uint8_t negative; /* I_LOOK */
    int32_t a, b;     /* I_CLASS/I_RUN: class; I_SPLIT: preferred, other; I_JMP: target;
                       * I_LOOK: sub-program start, next */
    int32_t min, max; /* I_RUN */
} inst;

struct pre_regex {
    bool collapsed;
    int n_insts;
    inst *insts;
    int n_classes;
    char_class *classes;
};

#endif
