#!/usr/bin/env python3
"""half_oracle.py IN OUT - numpy's float16 rounding of the little-endian float32 values in IN,
written to OUT as little-endian uint16 bit patterns (the oracle of test_emu_half.cpp)."""
import sys

import numpy as np

values = np.fromfile(sys.argv[1], dtype="<f4")
values.astype("<f2").view("<u2").tofile(sys.argv[2])
