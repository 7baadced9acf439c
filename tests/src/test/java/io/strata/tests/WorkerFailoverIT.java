package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.common.net.WorkerAddress;
import io.strata.tests.Scripts.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failover over real processes: a master and three workers started by {@code bin/strata-start.sh}, a client
 * in this JVM, files of 256 MiB in blocks of 16 MiB (16 blocks, spread over the workers), and a worker
 * process killed with SIGKILL (or frozen with SIGSTOP) in the middle of a block stream. Short-circuit is
 * off: the bytes travel over the worker's data port, the stream the kill cuts.
 *
 * <ul>
 *   <li>Read: the file is persisted (CACHE_THROUGH), so another copy exists in the under file system; the
 *       read goes on through another worker from the exact byte and is byte-exact.</li>
 *   <li>Write: MUST_CACHE; the block in progress fails over to another worker, which gets its bytes again
 *       from the writer's buffer (16 MiB blocks fit the 64 MB default), so the write COMPLETES (it does not
 *       fail: the test checks that); after the killed worker is started again (it holds the only copy of
 *       the blocks it committed before) the file reads back byte-exact.</li>
 * </ul>
 */
@Timeout(300)
class WorkerFailoverIT {
  private static final int MIB = 1 << 20;
  private static final int BLOCK = 16 * MIB;
  private static final int FILE_MIB = 256;

  @TempDir
  Path tmp;
  private final Map<String, String> env = new HashMap<>();
  private final List<Integer> workerPorts = new ArrayList<>();
  private final List<FileSystem> clients = new ArrayList<>();
  private ProcessHandle frozen;

  private Result run(String... cmd) throws Exception {
    return Scripts.run(tmp, env, cmd);
  }

  @AfterEach
  void stopAll() throws Exception {
    if (frozen != null && frozen.isAlive()) {
      new ProcessBuilder("kill", "-CONT", Long.toString(frozen.pid())).start().waitFor();
    }
    for (FileSystem fs : clients) {
      fs.close();
    }
    run("bin/strata-stop.sh", "all");
  }

  private void startMasterAndWorkers(int n) throws Exception {
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(Scripts.freePort()));
    env.put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    env.put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", tmp.resolve("ufs").toString());
    env.put("STRATA_HEAP", "384m");
    Result master = run("bin/strata-start.sh", "master");
    assertThat(master.exit()).as(master.err()).isZero();
    for (int i = 0; i < n; i++) {
      int port = Scripts.freePort();
      startWorker(port);
      workerPorts.add(port);
    }
  }

  private void startWorker(int port) throws Exception {
    Result worker = run("bin/strata-start.sh", "worker", "--port", Integer.toString(port), "--dir",
        workerDir(port).toString(), "--quota", "600MB");
    assertThat(worker.exit()).as(worker.err()).isZero();
  }

  private Path workerDir(int port) {
    return tmp.resolve("w-" + port);
  }

  private FileSystem client(String... keyValues) {
    Map<String, String> c = new HashMap<>(Map.of("strata.master.hostname", "localhost",
        "strata.master.rpc.port", env.get("STRATA_MASTER_RPC_PORT"),
        "strata.user.shortcircuit.mode", "off",
        "strata.user.block.write.location.policy", "ROUND_ROBIN",
        "strata.user.file.passive.cache.enabled", "false"));
    for (int i = 0; i < keyValues.length; i += 2) {
      c.put(keyValues[i], keyValues[i + 1]);
    }
    FileSystem fs = FileSystem.create(StrataConf.of(c));
    clients.add(fs);
    return fs;
  }

  private ProcessHandle workerProcess(int port) throws IOException {
    long pid = Long.parseLong(Files.readString(tmp.resolve("data/pids/worker-" + port + ".pid")).trim());
    return ProcessHandle.of(pid).orElseThrow();
  }

  private void kill(int port) throws Exception {
    ProcessHandle p = workerProcess(port);
    p.destroyForcibly(); // SIGKILL: no shutdown, no goodbye to the client or the master
    p.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
  }

  /** MiB {@code i} of the test file: the same bytes for the writer and the checks. */
  private static byte[] mib(int i) {
    byte[] b = new byte[MIB];
    new Random(0x5eed_0000L + i).nextBytes(b);
    return b;
  }

  private static void writeMiBs(FileOutStream out, int from, int to) throws IOException {
    for (int i = from; i < to; i++) {
      out.write(mib(i));
    }
  }

  /** Reads MiBs [from, to) and checks every byte against the generator. */
  private static void readAndCheck(FileInStream in, int from, int to) throws IOException {
    byte[] buf = new byte[MIB];
    for (int i = from; i < to; i++) {
      assertThat(in.readNBytes(buf, 0, MIB)).as("bytes read of MiB %d", i).isEqualTo(MIB);
      if (!Arrays.equals(buf, mib(i))) {
        throw new AssertionError("MiB " + i + " (at byte " + (long) i * MIB + ") differs from what was written");
      }
    }
  }

  private int onlyHolderPort(FileSystem fs, String path, int blockIndex) throws IOException {
    FileBlockInfo b = fs.getBlockLocations(path).get(blockIndex);
    assertThat(b.locations()).as("copies of block %d on workers", blockIndex).hasSize(1);
    return b.locations().get(0).address().rpcPort();
  }

  private static WorkerAddress addressOf(FileSystem fs, int port) throws IOException {
    return fs.getWorkers().stream().map(w -> w.address()).filter(a -> a.rpcPort() == port).findFirst()
        .orElseThrow();
  }

  private void writePersisted(FileSystem fs, String path, int mibs) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.CACHE_THROUGH))) {
      writeMiBs(out, 0, mibs);
    }
    assertThat(fs.getStatus(path).isPersisted()).isTrue();
  }

  @Test
  void read256MiB_isByteExact_whenTheWorkerServingItIsKilledMidBlock() throws Exception {
    startMasterAndWorkers(3);
    FileSystem fs = client();
    writePersisted(fs, "/big", FILE_MIB);
    int cutMib = 6 * 16 + 5; // 5 MiB into block 6
    int victim = onlyHolderPort(fs, "/big", 6);
    WorkerAddress victimAddress = addressOf(fs, victim);

    try (FileInStream in = fs.openFile("/big")) {
      readAndCheck(in, 0, cutMib);
      kill(victim);
      readAndCheck(in, cutMib, FILE_MIB);
      assertThat(in.read()).isEqualTo(-1);
      assertThat(in.getPos()).isEqualTo((long) FILE_MIB * MIB);
      assertThat(in.failedWorkers()).as("the read failed over from the killed worker").contains(victimAddress);
    }
  }

  @Test
  void read_failsOverToTheUfsCopy_whenTheWorkerServingItHangs() throws Exception {
    // A frozen worker (SIGSTOP) keeps its connections open and sends nothing: the read notices after the
    // RPC timeout (DEADLINE_EXCEEDED), which before this change failed the read.
    startMasterAndWorkers(2);
    writePersisted(client(), "/hang", 64);
    FileSystem fs = client("strata.network.rpc.timeout", "3s");
    int victim = onlyHolderPort(fs, "/hang", 1);
    WorkerAddress victimAddress = addressOf(fs, victim);

    try (FileInStream in = fs.openFile("/hang")) {
      readAndCheck(in, 0, 16 + 3);
      frozen = workerProcess(victim);
      assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(frozen.pid())).start().waitFor()).isZero();
      readAndCheck(in, 16 + 3, 64);
      assertThat(in.read()).isEqualTo(-1);
      assertThat(in.failedWorkers()).contains(victimAddress);
    }
  }

  private static List<Path> tempBlocks(Path dir) throws IOException {
    Path t = dir.resolve("tmp");
    if (!Files.isDirectory(t)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(t)) {
      return s.filter(Files::isRegularFile).toList();
    }
  }

  @Test
  void write256MiB_mustCache_completes_andReadsBackByteExact_whenTheWorkerReceivingABlockIsKilledMidBlock()
      throws Exception {
    startMasterAndWorkers(3);
    FileSystem fs = client();
    int cutMib = 6 * 16 + 4; // 4 MiB into block 6
    int[] victim = {-1};
    try (FileOutStream out = fs.createFile("/written", CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.MUST_CACHE))) {
      writeMiBs(out, 0, cutMib);
      // The worker receiving block 6 is the one with a temp block.
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        for (int port : workerPorts) {
          if (!tempBlocks(workerDir(port)).isEmpty()) {
            victim[0] = port;
            return true;
          }
        }
        return false;
      });
      kill(victim[0]);
      writeMiBs(out, cutMib, FILE_MIB);
    } // close commits the last block and completes the file: the write COMPLETED, it did not fail
    assertThat(fs.getStatus("/written").complete()).isTrue();
    assertThat(fs.getStatus("/written").length()).isEqualTo((long) FILE_MIB * MIB);
    List<FileBlockInfo> blocks = fs.getBlockLocations("/written");
    assertThat(blocks.get(6).locations()).as("block 6 went to another worker")
        .isNotEmpty().allSatisfy(l -> assertThat(l.address().rpcPort()).isNotEqualTo(victim[0]));

    // MUST_CACHE keeps one copy: the killed worker's earlier blocks come back when it starts again.
    startWorker(victim[0]);
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(fs.getBlockLocations("/written"))
        .allSatisfy(b -> assertThat(b.locations()).isNotEmpty()));
    try (FileInStream in = fs.openFile("/written")) {
      readAndCheck(in, 0, FILE_MIB);
      assertThat(in.read()).isEqualTo(-1);
    }
  }
}
