print("partial 11/10")
