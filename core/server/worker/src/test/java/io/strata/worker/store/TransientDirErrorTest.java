package io.strata.worker.store;

import static io.strata.worker.store.StoreFixture.content;
import static io.strata.worker.store.StoreFixture.read;
import static io.strata.worker.store.StoreFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.InternalException;
import io.strata.worker.store.BlockStore.TempBlock;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A transient error is not a dead disk (issue 9, point 5): running out of descriptors, a full device
 * and an interrupted call leave the dir in service; a dir whose tree is gone is still marked bad (the
 * rest of that is {@link StorageDirFailureTest}).
 */
class TransientDirErrorTest {
  @TempDir
  Path root;

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void outOfDescriptors_failsTheCallWithTooManyOpenFiles_butKeepsTheDir() throws Exception {
    Path dir = root.resolve("ssd");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder("bash", "-c", "ulimit -n 256 && exec \"$0\" -Xmx128m -cp \"$1\" "
        + FdExhaustionMain.class.getName() + " \"$2\"", java, System.getProperty("java.class.path"), dir.toString())
        .redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(out).as(out).contains("exhausted=").contains("Too many open files");
    // the call failed, naming the cause as a resource limit, not a failed dir
    assertThat(out).as(out).containsPattern("write=ResourceExhaustedException: .*too many open files");
    assertThat(out).as(out).contains("good=true").contains("after=ok");
    assertThat(p.exitValue()).as(out).isZero();
  }

  @Test
  void interruptedCommit_failsThatWrite_butKeepsTheDirAndItsBlocks() throws IOException {
    Path dir = root.resolve("ssd");
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 100_000, dir).build();
    write(store, 1, 1000);
    TempBlock t = store.createTemp(2, 1000);
    t.append(ByteBuffer.wrap(content(2, 1000)));
    Thread.currentThread().interrupt(); // the fsync of the commit is interruptible
    try {
      assertThatThrownBy(() -> store.commit(t)).isInstanceOf(InternalException.class)
          .hasMessageContaining("stays in service");
    } finally {
      Thread.interrupted();
    }
    assertThat(store.dirReports().get(0).good()).isTrue();
    assertThat(read(store, 1)).isEqualTo(content(1, 1000));
    assertThat(StoreFixture.tmpFiles(dir)).isEmpty();
    write(store, 2, 1000); // the id is free again and the dir takes it
    assertThat(read(store, 2)).isEqualTo(content(2, 1000));
    assertThat(store.usedBytes()).isEqualTo(2000);
  }

  @Test
  void fullDevice_isTransient_whileOtherErrorsAreNot() throws IOException {
    IOException full = null;
    try (OutputStream o = Files.newOutputStream(Path.of("/dev/full"))) {
      o.write(new byte[4096]);
      o.flush();
    } catch (IOException e) {
      full = e;
    }
    assertThat(full).as("writing /dev/full fails with ENOSPC").isNotNull();
    assertThat(DirProbe.kind(full)).isEqualTo(DirProbe.Kind.OUT_OF_SPACE);
    assertThat(DirProbe.isTransient(new IOException("Input/output error"))).isFalse();
  }

  @Test
  void probe_passesOnAHealthyDir_andAGoneDirIsConfirmedFailed() throws IOException {
    Path dir = root.resolve("ssd");
    TieredBlockStore store = StoreFixture.builder().tier("SSD", 100_000, dir).build();
    StorageDir d = store.dirs().get(0);
    assertThat(DirProbe.probe(d)).isTrue();
    assertThat(DirProbe.confirmsFailure(d, new IOException("Input/output error"))).isFalse();
    assertThat(StoreFixture.tmpFiles(dir)).isEmpty(); // the probe file is gone
    StoreFixture.deleteTree(dir);
    assertThat(DirProbe.confirmsFailure(d, new IOException("No space left on device"))).isTrue();
  }
}
