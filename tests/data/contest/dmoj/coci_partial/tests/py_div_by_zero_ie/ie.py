print("partial 1/0")
