/* pre_regex_compile.c - a pre-tokenizer regex parsed into a tree and compiled to the
 * instructions pre_regex.c runs. A pattern using \p{...} classes is first rewritten as llama.cpp
 * rewrites it for its "collapsed" text (see pre_regex.h). */
#include <stdlib.h>
#include <string.h>

#include "pre_regex_internal.h"
#include "unicode.h"

typedef enum node_kind { N_CLASS, N_SEQ, N_ALT, N_REPEAT, N_LOOK, N_END } node_kind;

typedef struct node {
    node_kind kind;
    int value;           /* N_CLASS: class index; N_LOOK: 1 when negative */
    int min, max;        /* N_REPEAT */
    int first, next;     /* first child and next sibling, -1 for none */
} node;

/* ------------------------------------------------------------------------------------------ */
/* Parsing                                                                                    */

typedef struct parser {
    const uint32_t *u;
    size_t n, pos;
    node nodes[MAX_NODES];
    int n_nodes;
    char_class *classes;
    int n_classes;
    const char *why;
} parser;

static int fail_parse(parser *p, const char *why)
{
    if (!p->why) {
        p->why = why;
    }
    return -1;
}

static int new_node(parser *p, node_kind kind)
{
    if (p->n_nodes == MAX_NODES) {
        return fail_parse(p, "too many regex nodes");
    }
    p->nodes[p->n_nodes] = (node){kind, 0, 0, 0, -1, -1};
    return p->n_nodes++;
}

static int new_class(parser *p)
{
    if (p->n_classes == MAX_CLASSES) {
        return fail_parse(p, "too many character classes");
    }
    memset(&p->classes[p->n_classes], 0, sizeof p->classes[0]);
    return p->n_classes++;
}

static void class_add_range(parser *p, char_class *c, uint32_t lo, uint32_t hi)
{
    for (uint32_t x = lo; x <= hi && x < 256; x++) {
        c->low[x >> 3] |= (uint8_t)(1u << (x & 7));
    }
    if (hi >= 256) {
        if (c->n_ranges == MAX_RANGES) {
            fail_parse(p, "too many ranges in a character class");
            return;
        }
        c->ranges[c->n_ranges][0] = lo < 256 ? 256 : lo;
        c->ranges[c->n_ranges][1] = hi;
        c->n_ranges++;
    }
}

/* Add the units of escape letter `e` (\s \d \w or their negations); false when `e` is not one. */
static bool class_add_escape_set(parser *p, char_class *c, uint32_t e)
{
    char_class set = {0};
    uint32_t lower = e | 0x20;
    if (lower == 's') {
        class_add_range(p, &set, '\t', '\r');
        class_add_range(p, &set, ' ', ' ');
    } else if (lower == 'd') {
        class_add_range(p, &set, '0', '9');
    } else if (lower == 'w') {
        class_add_range(p, &set, '0', '9');
        class_add_range(p, &set, 'A', 'Z');
        class_add_range(p, &set, 'a', 'z');
        class_add_range(p, &set, '_', '_');
    } else {
        return false;
    }
    bool negate = e != lower;
    for (int i = 0; i < 32; i++) {
        c->low[i] |= negate ? (uint8_t)~set.low[i] : set.low[i];
    }
    c->all_high |= negate;
    return true;
}

/* The unit an escape stands for (\r \n \t \f \v \0 or the escaped character itself). */
static uint32_t escaped_unit(uint32_t e)
{
    switch (e) {
    case 'r': return '\r';
    case 'n': return '\n';
    case 't': return '\t';
    case 'f': return '\f';
    case 'v': return '\v';
    case '0': return 0;
    default: return e;
    }
}

static bool is_unsupported_escape(uint32_t e)
{
    return e == 'b' || e == 'B' || e == 'p' || e == 'P' || e == 'x' || e == 'u' || e == 'c' || (e >= '1' && e <= '9');
}

/* [...] after the '['. */
static int parse_bracket(parser *p)
{
    int ci = new_class(p);
    if (ci < 0) {
        return -1;
    }
    char_class *c = &p->classes[ci];
    if (p->pos < p->n && p->u[p->pos] == '^') {
        c->negated = true;
        p->pos++;
    }
    while (p->pos < p->n && p->u[p->pos] != ']') {
        uint32_t lo = p->u[p->pos++];
        if (lo == '\\') {
            if (p->pos >= p->n) {
                return fail_parse(p, "regex ends inside an escape");
            }
            uint32_t e = p->u[p->pos++];
            if (class_add_escape_set(p, c, e)) {
                continue;
            }
            if (is_unsupported_escape(e)) {
                return fail_parse(p, "unsupported escape in a character class");
            }
            lo = escaped_unit(e);
        }
        uint32_t hi = lo;
        if (p->pos + 1 < p->n && p->u[p->pos] == '-' && p->u[p->pos + 1] != ']') {
            p->pos++;
            hi = p->u[p->pos++];
            if (hi == '\\') {
                if (p->pos >= p->n) {
                    return fail_parse(p, "regex ends inside an escape");
                }
                uint32_t e = p->u[p->pos++];
                if (is_unsupported_escape(e) || (e | 0x20) == 's' || (e | 0x20) == 'd' || (e | 0x20) == 'w') {
                    return fail_parse(p, "unsupported range end in a character class");
                }
                hi = escaped_unit(e);
            }
            if (hi < lo) {
                return fail_parse(p, "character range out of order");
            }
        }
        class_add_range(p, c, lo, hi);
    }
    if (p->pos >= p->n) {
        return fail_parse(p, "unterminated character class");
    }
    p->pos++;
    int nd = new_node(p, N_CLASS);
    if (nd >= 0) {
        p->nodes[nd].value = ci;
    }
    return p->why ? -1 : nd;
}

static int single_unit_class(parser *p, uint32_t lo, uint32_t hi, uint32_t escape_set)
{
    int ci = new_class(p);
    int nd = ci < 0 ? -1 : new_node(p, N_CLASS);
    if (nd < 0) {
        return -1;
    }
    if (escape_set) {
        class_add_escape_set(p, &p->classes[ci], escape_set);
    } else {
        class_add_range(p, &p->classes[ci], lo, hi);
    }
    p->nodes[nd].value = ci;
    return nd;
}

static int parse_alternation(parser *p);

static int parse_group(parser *p)
{
    int kind = 0; /* 0 group, 1 lookahead, 2 negative lookahead */
    if (p->pos < p->n && p->u[p->pos] == '?') {
        uint32_t c = p->pos + 1 < p->n ? p->u[p->pos + 1] : 0;
        if (c == ':') {
            kind = 0;
        } else if (c == '=') {
            kind = 1;
        } else if (c == '!') {
            kind = 2;
        } else {
            return fail_parse(p, "unsupported group kind (only (?: (?= (?! are)");
        }
        p->pos += 2;
    }
    int inner = parse_alternation(p);
    if (inner < 0) {
        return -1;
    }
    if (p->pos >= p->n || p->u[p->pos] != ')') {
        return fail_parse(p, "unbalanced parenthesis");
    }
    p->pos++;
    if (kind == 0) {
        return inner;
    }
    int nd = new_node(p, N_LOOK);
    if (nd >= 0) {
        p->nodes[nd].value = kind == 2;
        p->nodes[nd].first = inner;
    }
    return nd;
}

static int parse_atom(parser *p)
{
    uint32_t c = p->u[p->pos++];
    switch (c) {
    case '(':
        return parse_group(p);
    case '[':
        return parse_bracket(p);
    case '$':
        return new_node(p, N_END);
    case '^': case '.': case ')': case '*': case '+': case '?': case '{':
        return fail_parse(p, "unsupported or misplaced regex operator");
    case '\\': {
        if (p->pos >= p->n) {
            return fail_parse(p, "regex ends inside an escape");
        }
        uint32_t e = p->u[p->pos++];
        uint32_t lower = e | 0x20;
        if (lower == 's' || lower == 'd' || lower == 'w') {
            return single_unit_class(p, 0, 0, e);
        }
        if (is_unsupported_escape(e)) {
            return fail_parse(p, "unsupported regex escape");
        }
        uint32_t unit = escaped_unit(e);
        return single_unit_class(p, unit, unit, 0);
    }
    default:
        return single_unit_class(p, c, c, 0);
    }
}

static bool parse_number(parser *p, int *value)
{
    size_t start = p->pos;
    long v = 0;
    while (p->pos < p->n && p->u[p->pos] >= '0' && p->u[p->pos] <= '9' && v < 100000) {
        v = v * 10 + (long)(p->u[p->pos++] - '0');
    }
    *value = (int)v;
    return p->pos > start;
}

/* A quantifier after an atom, if any: sets min/max and returns true. */
static bool parse_quantifier(parser *p, int *min, int *max)
{
    if (p->pos >= p->n) {
        return false;
    }
    uint32_t c = p->u[p->pos];
    if (c == '*' || c == '+' || c == '?') {
        p->pos++;
        *min = c == '+' ? 1 : 0;
        *max = c == '?' ? 1 : UNBOUNDED;
    } else if (c == '{') {
        p->pos++;
        if (!parse_number(p, min)) {
            fail_parse(p, "malformed {n,m} quantifier");
            return false;
        }
        *max = *min;
        if (p->pos < p->n && p->u[p->pos] == ',') {
            p->pos++;
            if (!parse_number(p, max)) {
                *max = UNBOUNDED;
            }
        }
        if (p->pos >= p->n || p->u[p->pos] != '}' || (*max != UNBOUNDED && *max < *min)) {
            fail_parse(p, "malformed {n,m} quantifier");
            return false;
        }
        p->pos++;
    } else {
        return false;
    }
    if (p->pos < p->n && (p->u[p->pos] == '?' || p->u[p->pos] == '+')) {
        fail_parse(p, "lazy and possessive quantifiers are not supported");
        return false;
    }
    return true;
}

static bool nullable(const parser *p, int nd)
{
    const node *n = &p->nodes[nd];
    switch (n->kind) {
    case N_CLASS:
        return false;
    case N_SEQ:
        for (int c = n->first; c >= 0; c = p->nodes[c].next) {
            if (!nullable(p, c)) {
                return false;
            }
        }
        return true;
    case N_ALT:
        for (int c = n->first; c >= 0; c = p->nodes[c].next) {
            if (nullable(p, c)) {
                return true;
            }
        }
        return false;
    case N_REPEAT:
        return n->min == 0 || nullable(p, n->first);
    default:
        return true;
    }
}

static int parse_sequence(parser *p)
{
    int seq = new_node(p, N_SEQ);
    int last = -1;
    while (seq >= 0 && p->pos < p->n && p->u[p->pos] != '|' && p->u[p->pos] != ')') {
        int atom = parse_atom(p);
        int min, max;
        if (atom >= 0 && parse_quantifier(p, &min, &max)) {
            int rep = new_node(p, N_REPEAT);
            if (rep < 0) {
                return -1;
            }
            if ((max == UNBOUNDED || max > 1) && nullable(p, atom)) {
                return fail_parse(p, "a repeated part of the regex can match nothing");
            }
            p->nodes[rep].min = min;
            p->nodes[rep].max = max;
            p->nodes[rep].first = atom;
            atom = rep;
        }
        if (atom < 0 || p->why) {
            return -1;
        }
        if (last < 0) {
            p->nodes[seq].first = atom;
        } else {
            p->nodes[last].next = atom;
        }
        last = atom;
    }
    return seq;
}

static int parse_alternation(parser *p)
{
    int alt = new_node(p, N_ALT);
    int last = -1;
    for (;;) {
        int seq = alt < 0 ? -1 : parse_sequence(p);
        if (seq < 0) {
            return -1;
        }
        if (last < 0) {
            p->nodes[alt].first = seq;
        } else {
            p->nodes[last].next = seq;
        }
        last = seq;
        if (p->pos < p->n && p->u[p->pos] == '|') {
            p->pos++;
            continue;
        }
        return alt;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Compiling                                                                                  */

typedef struct emitter {
    inst *insts;
    int n;
    const parser *p;
    bool overflow;
} emitter;

static int emit(emitter *e, inst in)
{
    if (e->n == MAX_INSTS) {
        e->overflow = true;
        return e->n - 1;
    }
    e->insts[e->n] = in;
    return e->n++;
}

static void emit_node(emitter *e, int nd);

static void emit_repeat(emitter *e, const node *n)
{
    const node *child = &e->p->nodes[n->first];
    if (child->kind == N_CLASS) {
        emit(e, (inst){.op = I_RUN, .a = child->value, .min = n->min, .max = n->max});
        return;
    }
    for (int i = 0; i < n->min; i++) {
        emit_node(e, n->first);
    }
    if (n->max == UNBOUNDED) {
        int split = emit(e, (inst){.op = I_SPLIT});
        e->insts[split].a = e->n;
        emit_node(e, n->first);
        emit(e, (inst){.op = I_JMP, .a = split});
        e->insts[split].b = e->n;
        return;
    }
    int splits[64];
    int n_optional = n->max - n->min;
    if (n_optional > 64) {
        e->overflow = true;
        return;
    }
    for (int i = 0; i < n_optional; i++) {
        splits[i] = emit(e, (inst){.op = I_SPLIT});
        e->insts[splits[i]].a = e->n;
        emit_node(e, n->first);
    }
    for (int i = 0; i < n_optional; i++) {
        e->insts[splits[i]].b = e->n;
    }
}

static void emit_node(emitter *e, int nd)
{
    const node *n = &e->p->nodes[nd];
    switch (n->kind) {
    case N_CLASS:
        emit(e, (inst){.op = I_CLASS, .a = n->value});
        break;
    case N_SEQ:
        for (int c = n->first; c >= 0; c = e->p->nodes[c].next) {
            emit_node(e, c);
        }
        break;
    case N_ALT: {
        int jumps[256], n_jumps = 0;
        for (int c = n->first; c >= 0; c = e->p->nodes[c].next) {
            int split = -1;
            if (e->p->nodes[c].next >= 0) {
                split = emit(e, (inst){.op = I_SPLIT});
                e->insts[split].a = e->n;
            }
            emit_node(e, c);
            if (split >= 0) {
                if (n_jumps == 256) {
                    e->overflow = true;
                    return;
                }
                jumps[n_jumps++] = emit(e, (inst){.op = I_JMP});
                e->insts[split].b = e->n;
            }
        }
        for (int i = 0; i < n_jumps; i++) {
            e->insts[jumps[i]].a = e->n;
        }
        break;
    }
    case N_REPEAT:
        emit_repeat(e, n);
        break;
    case N_LOOK: {
        int look = emit(e, (inst){.op = I_LOOK, .negative = (uint8_t)n->value});
        e->insts[look].a = e->n;
        emit_node(e, n->first);
        emit(e, (inst){.op = I_MATCH});
        e->insts[look].b = e->n;
        break;
    }
    case N_END:
        emit(e, (inst){.op = I_EOL});
        break;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The pattern as units: code points, or llama.cpp's collapsed bytes                          */

typedef struct category {
    const char *name;   /* as written in a pattern */
    unsigned marker;    /* the collapsed byte of its non-ASCII members */
    const char *ascii;  /* its ASCII members, as bracket content */
} category;

static const category categories[] = {
    {"\\p{N}", 0xD1, "0-9"},
    {"\\p{L}", 0xD2, "A-Za-z"},
    {"\\p{P}", 0xD3, "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {"\\p{M}", 0xD4, ""},
    {"\\p{S}", 0xD5, "\\$\\+<->\\^`\\|"},
    {"\\p{Lu}", 0xD2, "A-Za-z"},
    {"\\p{Ll}", 0xD2, "A-Za-z"},
    {"\\p{Lt}", 0xD2, "A-Za-z"},
    {"\\p{Lm}", 0xD2, "A-Za-z"},
    {"\\p{Lo}", 0xD2, "A-Za-z"},
};
enum { N_CATEGORIES = sizeof categories / sizeof categories[0] };

static const category *category_at(const char *s, size_t len)
{
    for (int i = 0; i < N_CATEGORIES; i++) {
        if (strlen(categories[i].name) == len && memcmp(categories[i].name, s, len) == 0) {
            return &categories[i];
        }
    }
    return NULL;
}

static bool uses_categories(const char *pattern)
{
    for (int i = 0; i < N_CATEGORIES; i++) {
        if (strstr(pattern, categories[i].name)) {
            return true;
        }
    }
    return false;
}

static bool push_unit(uint32_t *u, size_t *n, uint32_t unit)
{
    if (*n == MAX_UNITS) {
        return false;
    }
    u[(*n)++] = unit;
    return true;
}

/* The collapsed pattern: each known \p{...} becomes its marker byte and ASCII members, wrapped
 * in [...] when it stands outside a bracket. Brackets are tracked as llama.cpp tracks them (an
 * unescaped '[' opens, an unescaped ']' inside closes). */
static bool collapse_pattern(const char *s, uint32_t *u, size_t *n, const char **why)
{
    size_t len = strlen(s);
    bool inside = false, ok = true;
    for (size_t i = 0; i < len && ok; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            *why = "regex mixes \\p{...} classes with non-ASCII characters";
            return false;
        }
        if (c == '[' && (i == 0 || s[i - 1] != '\\')) {
            inside = true;
        } else if (inside && c == ']' && s[i - 1] != '\\') {
            inside = false;
        } else if (c == '\\' && i + 3 < len && s[i + 1] == 'p' && s[i + 2] == '{') {
            const char *close = strchr(s + i + 3, '}');
            const category *cat = (close && (size_t)(close - s) <= i + 10) ? category_at(s + i, (size_t)(close - s) - i + 1) : NULL;
            if (cat) {
                ok = (inside || push_unit(u, n, '[')) && push_unit(u, n, cat->marker);
                for (const char *a = cat->ascii; *a && ok; a++) {
                    ok = push_unit(u, n, (unsigned char)*a);
                }
                ok = ok && (inside || push_unit(u, n, ']'));
                i = (size_t)(close - s);
                continue;
            }
        }
        ok = push_unit(u, n, c);
    }
    if (!ok) {
        *why = "regex too long";
    }
    return ok;
}

static bool decode_pattern(const char *s, uint32_t *u, size_t *n, const char **why)
{
    size_t len = strlen(s);
    if (len > MAX_UNITS) {
        *why = "regex too long";
        return false;
    }
    *n = inf_utf8_decode(s, len, u);
    return true;
}

pre_regex *pre_regex_compile(const char *pattern, const char **why)
{
    *why = NULL;
    pre_regex *re = calloc(1, sizeof *re);
    uint32_t *units = malloc(MAX_UNITS * sizeof *units);
    parser *p = calloc(1, sizeof *p);
    char_class *classes = malloc(MAX_CLASSES * sizeof *classes);
    inst *insts = malloc(MAX_INSTS * sizeof *insts);
    size_t n_units = 0;
    bool ok = re && units && p && classes && insts;
    if (!ok) {
        *why = "out of memory";
    }
    if (ok) {
        re->collapsed = uses_categories(pattern);
        ok = re->collapsed ? collapse_pattern(pattern, units, &n_units, why) : decode_pattern(pattern, units, &n_units, why);
    }
    if (ok) {
        *p = (parser){.u = units, .n = n_units, .classes = classes};
        int root = parse_alternation(p);
        if (root >= 0 && p->pos != p->n) {
            root = fail_parse(p, "unbalanced parenthesis");
        }
        ok = root >= 0;
        *why = p->why;
        if (ok) {
            emitter e = {insts, 0, p, false};
            emit_node(&e, root);
            emit(&e, (inst){.op = I_MATCH});
            ok = !e.overflow;
            *why = ok ? NULL : "regex too large";
            re->n_insts = e.n;
        }
    }
    if (ok) {
        re->insts = realloc(insts, (size_t)re->n_insts * sizeof *insts);
        re->n_classes = p->n_classes;
        re->classes = realloc(classes, (size_t)(p->n_classes ? p->n_classes : 1) * sizeof *classes);
        ok = re->insts && re->classes;
        insts = re->insts ? NULL : insts;
        classes = re->classes ? NULL : classes;
    }
    free(units);
    free(p);
    if (!ok) {
        free(insts);
        free(classes);
        pre_regex_free(re);
        return NULL;
    }
    return re;
}

void pre_regex_free(pre_regex *re)
{
    if (re) {
        free(re->insts);
        free(re->classes);
        free(re);
    }
}
