print("mlconv")
