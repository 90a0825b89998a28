print("partial 1/5")
