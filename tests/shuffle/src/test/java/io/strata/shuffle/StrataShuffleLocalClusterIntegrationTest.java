package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.bench.ShuffleBench;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.minicluster.LocalStrataCluster;
import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The differential of {@link StrataShuffleSparkIntegrationTest} in Spark's {@code local-cluster[2,1,1024]}, set
 * up as a user's deployment: a standalone master and two workers inside this JVM, whose executors are separate
 * JVMs that get Spark from a Spark home's {@code jars/} dir, the adapter only from
 * {@code spark.executor.extraClassPath} set to what {@code bin/strata classpath shuffle} prints (the shaded
 * adapter and client jars under lib/), and the job's classes from an application jar in {@code spark.jars}. The
 * jobs give the built-in shuffle's answers (also run so); each executor is a process other than this one whose
 * shuffle manager is StrataShuffleManager loaded from lib/shuffle/strata-shuffle.jar (its code source), with the
 * client from lib/client/strata-client.jar, and no other entry of its classpath holds an {@code io.strata}
 * class; and the shuffles' partition files hold bytes in Strata while the application runs (fallback to the
 * sort shuffle is off, so nothing hides a failed push).
 *
 * <p>What Spark 4.0.1 puts on a local-cluster executor's classpath (read in its source):
 * {@code StandaloneSchedulerBackend.start} makes the executor command's class path entries
 * {@code spark.executor.extraClassPath ++ testingClassPath}, where {@code testingClassPath} is this JVM's whole
 * {@code java.class.path} when the system property {@code spark.testing} is set, and empty otherwise. The
 * worker's {@code ExecutorRunner} builds the command with {@code CommandUtils} and the launcher's
 * {@code WorkerCommandBuilder} ({@code AbstractCommandBuilder.buildClassPath}): those entries first, then
 * {@code $SPARK_HOME/conf}, then, with {@code SPARK_TESTING=1} in the environment, build dirs of a Spark source
 * tree under the Spark home ({@code <project>/target/scala-2.13/test-classes}, {@code core/target/jars/*}; here
 * they do not exist), then {@code $SPARK_HOME/jars/*} if that dir exists (without {@code SPARK_TESTING} its
 * absence is an error). The worker's Spark home is the system property {@code spark.test.home} when
 * {@code spark.testing} is set, else the environment's {@code SPARK_HOME} (else "."). So with
 * {@code spark.testing} (how this test ran before, without any extraClassPath) executors got the unshaded adapter,
 * the Strata client, the servers and these test classes from this JVM's classpath, and an extraClassPath would
 * only have come first (with the property left in place, the classpath test below fails naming those entries);
 * without it and without a Spark distribution they get no Spark classes at all and cannot start. This test
 * therefore lays out the Spark home (the surefire configuration's {@code SPARK_HOME}, which is also
 * {@code spark.test.home}) as a distribution: its {@code jars/} links every jar of this JVM's classpath that holds
 * no {@code io.strata} class (Spark 4.0.1 and its dependencies as this build resolved them, but also Strata's
 * unrelocated third-party jars and the test libraries, which the shaded jars never name), and it creates each
 * SparkContext with the {@code spark.testing} system property taken away (and put back), so the worker uses that
 * home and the backend adds nothing of this JVM's classpath. The driver (this JVM) keeps its own, unshaded adapter.
 *
 * <p>Also needs what the module's surefire configuration sets: {@code SPARK_TESTING=1} and
 * {@code SPARK_SCALA_VERSION} (the launcher then needs no Spark build's version dirs), {@code SPARK_LOCAL_IP}
 * (loopback) and {@code strata.project.root}. Single-threaded.
 */
class StrataShuffleLocalClusterIntegrationTest {
  private static final String MASTER = "local-cluster[2,1,1024]";
  private static final Path ROOT = Path.of(System.getProperty("strata.project.root", "../..")).toAbsolutePath()
      .normalize();
  private static LocalStrataCluster cluster;
  private static List<String> adapterClasspath;
  private static Path sparkJars;
  private static Path appJar;
  private static Map<String, Object> builtin;
  private static Map<String, Object> strata;
  private static Collection<Executor> executors;
  private static long shuffleBytes;
  private static String appId;

  /** What a task saw of its executor: the process, its shuffle manager, where classes came from, its classpath. */
  record Executor(long pid, String manager, String managerFrom, String clientFrom, String jobsFrom,
      List<String> classPath) implements Serializable {}

  /**
   * 2 executors of 512 MB (under the workers' 1024), both registered before the first job. The standalone
   * backend counts registered cores against spark.cores.max (0 when unset), so without it the ratio waits for
   * nothing: the first job could start with one executor and run every task there (seen in CI).
   */
  private static SparkConf conf() {
    return ShuffleJobs.conf(MASTER).set("spark.executor.memory", "512m")
        .set("spark.cores.max", "2")
        .set("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .set("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s")
        .set("spark.jars", appJar.toString());
  }

  @BeforeAll
  static void runBoth() throws Exception {
    adapterClasspath = strataClasspathShuffle();
    Path sparkHome = Path.of(System.getenv("SPARK_HOME"));
    sparkJars = layOutSparkJars(sparkHome.resolve("jars"));
    appJar = applicationJar(sparkHome.resolve("app"));
    try (JavaSparkContext sc = withoutSparkTestingProperty(conf())) {
      builtin = ShuffleJobs.runAll(sc);
    }
    cluster = LocalStrataCluster.builder().workers(2).build().start();
    SparkConf conf = conf().set("spark.shuffle.manager", StrataShuffleManager.class.getName())
        .set("spark.executor.extraClassPath", String.join(File.pathSeparator, adapterClasspath))
        .set("spark.strata.master", "localhost:" + cluster.masterPort())
        .set("spark.strata.shuffle.fallback.enabled", "false");
    try (JavaSparkContext sc = withoutSparkTestingProperty(conf)) {
      // One task per core and more: the first offer round gives each executor one.
      Map<Long, Executor> byPid = new TreeMap<>();
      for (Executor e : sc.parallelize(ShuffleJobs.range(8), 8).map(i -> describeExecutor()).collect()) {
        byPid.put(e.pid(), e);
      }
      executors = byPid.values();
      strata = ShuffleJobs.runAll(sc);
      appId = SparkFaults.appKey(sc); // known once a shuffle was registered
      assertThat(appId).startsWith(sc.sc().applicationId() + "-");
      FileSystem fs = cluster.client();
      for (URIStatus shuffle : fs.listStatus("/.shuffle/" + appId)) {
        for (URIStatus partition : fs.listStatus(shuffle.path())) {
          shuffleBytes += partition.length();
        }
      }
    }
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void tasksRunInTwoOtherJvms_withTheStrataShuffleManager_fromTheExtraClassPath() {
    String driverAdapter = codeSource(StrataShuffleManager.class);
    assertThat(executors).hasSize(2);
    for (Executor e : executors) {
      assertThat(e.pid()).isNotEqualTo(ProcessHandle.current().pid());
      assertThat(e.manager()).isEqualTo(StrataShuffleManager.class.getName());
      assertThat(e.managerFrom()).as("where executor %d loaded the adapter from", e.pid())
          .isEqualTo(adapterClasspath.get(0)).isNotEqualTo(driverAdapter);
      assertThat(e.clientFrom()).as("where executor %d loaded the Strata client from", e.pid())
          .isEqualTo(adapterClasspath.get(1));
      assertThat(Path.of(e.jobsFrom())).as("the job's classes in executor %d: the application jar, fetched", e.pid())
          .hasFileName(appJar.getFileName().toString()).isNotEqualTo(appJar);
    }
  }

  @Test
  void executorsClasspath_isTheExtraClassPath_thenSparksJars_withNoOtherStrataClass() {
    assertThat(executors).hasSize(2);
    for (Executor e : executors) {
      List<String> cp = e.classPath();
      assertThat(cp.subList(0, adapterClasspath.size())).as("executor %d's java.class.path begins with "
          + "spark.executor.extraClassPath", e.pid()).isEqualTo(adapterClasspath);
      List<String> rest = cp.subList(adapterClasspath.size(), cp.size());
      assertThat(rest).as("executor %d's entries holding io.strata classes", e.pid())
          .filteredOn(p -> holdsStrataClasses(Path.of(p))).isEmpty();
      assertThat(rest).as("executor %d's jars from the Spark home", e.pid())
          .filteredOn(p -> Path.of(p).startsWith(sparkJars)).hasSizeGreaterThan(50);
    }
  }

  @Test
  void everyJob_givesTheBuiltInShufflesAnswer() {
    ShuffleJobs.assertSameAnswers(strata, builtin);
  }

  @Test
  void theShufflesBytesWentThroughStrata_andGoWithTheApplication() throws Exception {
    assertThat(shuffleBytes).isPositive();
    assertThat(cluster.client().exists("/.shuffle/" + appId)).isFalse();
  }

  /** Runs in an executor. */
  private static Executor describeExecutor() throws ClassNotFoundException {
    Class<?> manager = SparkEnv.get().shuffleManager().getClass();
    Class<?> client = Class.forName(FileSystem.class.getName(), false, manager.getClassLoader());
    return new Executor(ProcessHandle.current().pid(), manager.getName(), codeSource(manager), codeSource(client),
        codeSource(ShuffleJobs.class), List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
  }

  private static String codeSource(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A SparkContext made while the {@code spark.testing} system property is away (Spark's standalone worker and
   * scheduler backend read it there as they start, inside the constructor), so executors get Spark's classes
   * from the Spark home's jars and nothing of this JVM's classpath.
   */
  private static JavaSparkContext withoutSparkTestingProperty(SparkConf conf) {
    String testing = System.clearProperty("spark.testing");
    try {
      return new JavaSparkContext(conf);
    } finally {
      if (testing != null) {
        System.setProperty("spark.testing", testing);
      }
    }
  }

  /** The entries {@code bin/strata classpath shuffle} prints, as a user runs it. */
  private static List<String> strataClasspathShuffle() throws IOException, InterruptedException {
    Process p = new ProcessBuilder(ROOT.resolve("bin/strata").toString(), "classpath", "shuffle")
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("bin/strata classpath shuffle ends").isTrue();
    assertThat(p.exitValue()).as("bin/strata classpath shuffle: " + out).isZero();
    List<String> entries = List.of(out.split(File.pathSeparator));
    assertThat(entries).extracting(e -> Path.of(e).getFileName().toString())
        .containsExactly("strata-shuffle.jar", "strata-client.jar");
    assertThat(entries).allSatisfy(e -> assertThat(Path.of(e)).isRegularFile());
    return entries;
  }

  /** Links every jar of this JVM's classpath without an {@code io.strata} class into {@code jars} (made anew). */
  private static Path layOutSparkJars(Path jars) throws IOException {
    LocalStrataCluster.deleteRecursively(jars);
    Files.createDirectories(jars);
    int n = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path jar = Path.of(entry).toAbsolutePath();
      if (entry.endsWith(".jar") && Files.isRegularFile(jar) && !holdsStrataClasses(jar)) {
        // A number in front: two artifacts may share a file name.
        Files.createSymbolicLink(jars.resolve(n++ + "-" + jar.getFileName()), jar);
      }
    }
    assertThat(n).as("Spark's jars linked into " + jars).isGreaterThan(50);
    return jars;
  }

  /** Whether a classpath entry (a jar or a dir) holds a class of a package under {@code io.strata}. */
  private static boolean holdsStrataClasses(Path entry) {
    if (Files.isDirectory(entry)) {
      return Files.isDirectory(entry.resolve("io/strata"));
    }
    if (!Files.isRegularFile(entry)) {
      return false;
    }
    try (JarFile jar = new JarFile(entry.toFile())) {
      return jar.stream().anyMatch(e -> e.getName().startsWith("io/strata/") && e.getName().endsWith(".class"));
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read " + entry, e);
    }
  }

  /**
   * The application jar a user would submit: this module's test classes and its main classes (the jobs use
   * {@link ShuffleBench}'s checksum), each a dir under target/ turned into one jar here (or a jar as it is).
   */
  private static Path applicationJar(Path dir) throws IOException {
    LocalStrataCluster.deleteRecursively(dir);
    Files.createDirectories(dir);
    Path jar = dir.resolve("strata-shuffle-it-app.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      for (Class<?> c : List.of(ShuffleJobs.class, ShuffleBench.class)) {
        Path from = Path.of(codeSource(c));
        assertThat(from).as("classes of " + c).isDirectory();
        addTree(out, from);
      }
    }
    return jar;
  }

  private static void addTree(JarOutputStream out, Path root) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.walk(root)) {
      files = s.filter(Files::isRegularFile).sorted().toList();
    }
    for (Path f : files) {
      out.putNextEntry(new JarEntry(root.relativize(f).toString().replace(File.separatorChar, '/')));
      Files.copy(f, out);
      out.closeEntry();
    }
  }
}
