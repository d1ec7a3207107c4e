/* session_logits.h - where a session keeps the logits of its last decode, for the scorers of
 * libinfer/src/eval (logits_score.h): a CUDA session leaves them in device memory, so that they
 * are scored there and never cross PCIe unless inf_session_logits() asks for them. */
#ifndef SESSION_LOGITS_H
#define SESSION_LOGITS_H

#include <stdint.h>

#include <ggtk/inf_backend.h>
#include <ggtk/inf_model.h>

/* The device address of the last decode's logits (*n_rows rows of n_vocab floats, row r for
 * tokens[first_output + r]; n_rows may be NULL) when the session keeps them in device memory;
 * NULL when they are on the host (inf_session_logits()). Valid until the next decode. */
const float *session_device_logits(const inf_session *session, int32_t *n_rows);

/* Whether the session leaves its decodes' logits in device memory (it computes the output layer
 * on a device). */
bool session_logits_on_device(const inf_session *session);

/* The backend the session computes its logits on. */
inf_backend *session_logits_backend(const inf_session *session);

#endif
