# Golden function inventory
# | # | Golden operation            | Shape transformation |
# |---|-----------------------------|----------------------|
# | 1 | 3 x + 1                     | [B,D] -> [B,D]       |
# | 2 | zero columns 32..D          | [B,D] -> [B,D]       |


def golden(x):
    y = x * 3 + 1                                      # [B, D]
    y[:, 32:] = 0                                      # [B, D]
    return y                                           # [B, D]
