# pytorch_threads.py: forwards on many threads, training on one, the program
# pytorch_threads.sh runs under `gtrace --pytorch`. It knows nothing of gtrace.
#
#   python3 pytorch_threads.py [--threads T] [--forwards F] [--steps S]
#                              [--train-thread]
#
# T threads, started together (a barrier), each run F forwards of the model
# (without grad, as an evaluation or a server would); when they are done the
# main thread trains S steps: a DataLoader batch, the model and the loss
# forward, backward, an SGD step. With --train-thread the main thread first
# runs one forward of its own and the training runs on a thread of its own.
# Prints "trainer tid N" (the training thread's native id) and "trained S steps".
import argparse
import sys
import threading

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.body(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=50)
    p.add_argument("--forwards", type=int, default=20)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--train-thread", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    model = Net()
    x = torch.randn(64, 16)
    y = torch.randint(0, 4, (64,))

    if a.train_thread:
        with torch.no_grad():
            model(x[:8])

    gate = threading.Barrier(a.threads)

    def infer():
        gate.wait()
        with torch.no_grad():
            for _ in range(a.forwards):
                model(x[:8])

    workers = [threading.Thread(target=infer) for _ in range(a.threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()

    def train():
        print("trainer tid %d" % threading.get_native_id())
        loader = DataLoader(TensorDataset(x, y), batch_size=16)
        loss_fn = nn.CrossEntropyLoss()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        step = 0
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step == a.steps:
                break
        print("trained %d steps, last loss %.4f" % (step, loss.item()))

    if a.train_thread:
        t = threading.Thread(target=train)
        t.start()
        t.join()
    else:
        train()


if __name__ == "__main__":
    sys.exit(main())
