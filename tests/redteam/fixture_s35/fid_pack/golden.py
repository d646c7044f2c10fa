# Golden function inventory
# | # | Golden operation            | Shape transformation |
# |---|-----------------------------|----------------------|
# | 1 | slot * 2^24 + hid (int32)   | [B,F],[B,F] -> [B,F] |


def golden(slot, hid):
    fid = slot * 16777216 + hid     # [B, F] int32, exact
    return fid
