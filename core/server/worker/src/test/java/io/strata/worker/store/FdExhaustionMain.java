package io.strata.worker.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Run in a child JVM with a low descriptor limit by {@link TransientDirErrorTest}: writes a block, uses
 * up every descriptor, tries a write and a read, gives the descriptors back, and prints what happened
 * (one {@code key=value} per line) so the test can check the dir stayed in service.
 */
public final class FdExhaustionMain {
  private FdExhaustionMain() {}

  public static void main(String[] args) throws IOException {
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 1_000_000, Path.of(args[0])).build();
    StoreFixture.write(store, 1, 1000);
    // Load now what the error paths need: loading a class needs a descriptor too.
    StorageDir dir = store.dirs().get(0);
    StoreFixture.read(store, 1);
    DirProbe.confirmsFailure(dir, new IOException("Input/output error"));
    System.out.println("warm=" + DirProbe.transientError("w", dir, new IOException("Too many open files")).getMessage()
        + DirProbe.transientError("w", dir, new IOException("x")).getMessage()
        + new io.strata.common.exception.NotFoundException("x").getMessage());
    List<FileChannel> hogs = new ArrayList<>();
    try {
      while (hogs.size() < 100_000) {
        hogs.add(FileChannel.open(Path.of("/dev/null"), StandardOpenOption.READ));
      }
    } catch (IOException e) {
      System.out.println("exhausted=" + e.getMessage());
    }
    // free a couple so the JVM itself can go on, but not enough for the store's files
    for (int i = 0; i < 2 && !hogs.isEmpty(); i++) {
      hogs.remove(hogs.size() - 1).close();
    }
    try {
      List<FileChannel> more = new ArrayList<>();
      try {
        while (true) {
          more.add(FileChannel.open(Path.of("/dev/null"), StandardOpenOption.READ));
        }
      } catch (IOException e) {
        // exactly out again
      }
      hogs.addAll(more);
      StoreFixture.write(store, 2, 1000);
      System.out.println("write=ok");
    } catch (IOException e) {
      System.out.println("write=" + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    try {
      StoreFixture.read(store, 1);
      System.out.println("read=ok");
    } catch (IOException e) {
      System.out.println("read=" + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    for (FileChannel c : hogs) {
      c.close();
    }
    System.out.println("good=" + store.dirReports().get(0).good());
    StoreFixture.write(store, 3, 1000);
    System.out.println("after=" + (java.util.Arrays.equals(StoreFixture.read(store, 1), StoreFixture.content(1, 1000))
        && java.util.Arrays.equals(StoreFixture.read(store, 3), StoreFixture.content(3, 1000)) ? "ok" : "wrong"));
  }
}
