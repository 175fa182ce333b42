# The stand-in for `torch` the rope seed imports: it only names torch.Tensor.
class Tensor:  # annotations only
    pass
