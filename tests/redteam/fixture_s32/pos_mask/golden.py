# Golden function inventory
# | # | Golden operation                           | Shape transformation |
# |---|--------------------------------------------|----------------------|
# | 1 | x > 0 on columns 0..31, False on 32..63     | [B,D] -> [B,D]       |


def golden(x):
    y = x > 0
    y[:, 32:] = False
    return y
