/* model_scan.h - finding the weight that turns a model's scores into NaN or infinity. */
#ifndef MODEL_SCAN_H
#define MODEL_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include <ggtk/inf_model.h>

/* Dequantize every weight tensor of `model`, in file order, and find the first one holding a NaN
 * or an infinity: *name receives its name (owned by the model) and *row its first such row, or
 * *name is NULL when every weight is finite. Tensors of types that cannot be dequantized are not
 * checked. Reads all the weights, so it is meant for explaining a failure, not for every run.
 * False (nothing found) when out of memory. */
bool model_find_nonfinite_weight(const inf_model *model, const char **name, int64_t *row);

#endif
