print("partial 0/4")
