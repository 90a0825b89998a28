import math
r = float(input())
print(f'{math.pi * r * r:.2f}')
