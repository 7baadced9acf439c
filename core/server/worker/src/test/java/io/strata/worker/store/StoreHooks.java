package io.strata.worker.store;

import java.nio.file.Path;

/** What tests of other packages (the worker's master sync) do to a store that only this package may: fail a dir. */
public final class StoreHooks {
  private StoreHooks() {}

  /** Takes the store's dir at {@code root} out of service as a confirmed failure would (its layout gone). */
  public static void failDir(TieredBlockStore store, Path root) {
    for (StorageDir d : store.dirs()) {
      if (d.root.equals(root)) {
        if (!store.dirFailed(d, null)) {
          throw new IllegalStateException("Dir " + root + " is still in service: delete its layout first");
        }
        return;
      }
    }
    throw new IllegalArgumentException("No dir " + root + " in " + store.dirs());
  }
}
