print("partial 4/4")
