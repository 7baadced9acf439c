package io.strata.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.cli.StrataCli;
import io.strata.client.BlockLocation;
import io.strata.client.ClusterInfo;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.format.Sizes;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.store.BlockStore;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The web UI in a real browser: Debian's Chromium, headless, driven by Selenium through Debian's
 * chromedriver, against a real in-process cluster (a master and two workers). The overview shows what
 * {@code strata fsadmin report} prints; the browser clicks its way into directories and files, whose
 * status, block locations and first KB match the client API; names that are HTML ({@code <script>},
 * {@code <img onerror>}) show as text, with no script element in the DOM and no alert; a worker's page
 * lists its dirs and blocks, and the master's workers page links it on its registered web port; the
 * configuration masks a credential. Screenshots of the overview and the browser go to target/screenshots
 * (and to {@code -Dstrata.ui.screenshots=DIR}, how docs/ got its).
 *
 * <p>The browser and driver must be installed ({@code apt-get install chromium chromium-driver}; .ci/run
 * does it): without them the test fails, saying so.
 */
class WebUiBrowserTest {
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final String SCRIPT_PATH = "/data/<script>x</script>";
  static final String IMG_NAME = "<img src=x onerror=alert(1)>";
  static final String SECRET = "hunter2-not-for-eyes";

  @TempDir
  static Path tmp;
  static LocalStrataCluster cluster;
  static FileSystem fs;
  static WebDriver driver;
  static String master;
  static byte[] log;

  @BeforeAll
  static void start() throws IOException {
    assertThat(Files.isExecutable(CHROMIUM)).as("The browser test needs Debian's Chromium at " + CHROMIUM
        + ": install it with `apt-get install -y chromium chromium-driver` (.ci/run does)").isTrue();
    assertThat(Files.isExecutable(CHROMEDRIVER)).as("The browser test needs Debian's chromedriver at "
        + CHROMEDRIVER + ": install it with `apt-get install -y chromium chromium-driver` (.ci/run does)").isTrue();
    cluster = LocalStrataCluster.builder().workers(2).baseDir(tmp.resolve("cluster"))
        .set("strata.ui.test.secret.key", SECRET)
        // A log of two 2 KB blocks, small enough for the page to show whole, takes blocks under the 64 KB default.
        .set("strata.master.block.size.min", "1KB").build().start();
    fs = cluster.client();
    StringBuilder b = new StringBuilder();
    for (int i = 0; b.length() < 3000; i++) {
      b.append("line ").append(i).append(" of the web UI test & <friends>\n");
    }
    log = b.toString().getBytes(StandardCharsets.UTF_8);
    write("/data/logs/app.log", log, 2048);
    write(SCRIPT_PATH, "<script>alert(2)</script> is just text".getBytes(StandardCharsets.UTF_8), 1 << 20);
    write("/data/" + IMG_NAME, "an image that is not".getBytes(StandardCharsets.UTF_8), 1 << 20);
    master = "http://127.0.0.1:" + cluster.master().web().port();
    awaitHeartbeatsReportUsage();

    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    // As root, headless, with nothing reaching out of the machine (its closed network refuses it).
    options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--user-data-dir=" + Files.createDirectories(tmp.resolve("chromium-profile")), "--window-size=1280,900");
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(new File(CHROMEDRIVER.toString())).usingAnyFreePort().build();
    driver = new ChromeDriver(service, options);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    driver.manage().window().setSize(new Dimension(1280, 900));
  }

  @AfterAll
  static void stop() {
    if (driver != null) {
      driver.quit();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * Waits (at most 30 s) until the master's figure of used bytes is what the workers' stores hold: usage
   * reaches the master with the next heartbeat, and the overview is compared with the CLI's report.
   */
  private static void awaitHeartbeatsReportUsage() {
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> {
          long stored = 0;
          for (var w : cluster.workers()) {
            stored += w.tieredStore().usedBytes();
          }
          assertThat(stored).isPositive();
          assertThat(fs.getClusterInfo().usedBytes()).as("the master's used bytes against the workers'")
              .isEqualTo(stored);
        });
  }

  private static void write(String path, byte[] data, long blockSize) throws IOException {
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withRecursive(true)
        .withBlockSize(blockSize).withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
  }

  /** The value cell of the row headed {@code key} in the key/value table {@code id}. */
  private static String value(String tableId, String key) {
    for (WebElement row : driver.findElement(By.id(tableId)).findElements(By.tagName("tr"))) {
      if (row.findElement(By.tagName("th")).getText().equals(key)) {
        return row.findElement(By.tagName("td")).getText();
      }
    }
    throw new AssertionError("No row " + key + " in table " + tableId + ": " + driver.getPageSource());
  }

  /** The rows of table {@code id} as cell texts, header row left out. */
  private static List<List<String>> rows(String tableId) {
    List<List<String>> out = new ArrayList<>();
    for (WebElement row : driver.findElement(By.id(tableId)).findElements(By.tagName("tr"))) {
      List<String> cells = new ArrayList<>();
      for (WebElement td : row.findElements(By.tagName("td"))) {
        cells.add(td.getText());
      }
      if (!cells.isEmpty()) {
        out.add(cells);
      }
    }
    return out;
  }

  /** What {@code strata fsadmin report} prints, as "Key" to "value" for its summary lines. */
  private static Map<String, String> cliReport() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = StrataCli.run(cluster.clientConf(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), "fsadmin", "report");
    assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
    Map<String, String> m = new HashMap<>();
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      int colon = line.indexOf(": ");
      if (colon > 0 && !line.startsWith(" ")) {
        m.put(line.substring(0, colon), line.substring(colon + 2));
      }
    }
    return m;
  }

  /** No page may hold a script element, and none may have opened an alert. */
  private static void assertNoScript() {
    assertThat(driver.findElements(By.tagName("script"))).isEmpty();
    assertThatThrownBy(() -> driver.switchTo().alert()).isInstanceOf(NoAlertPresentException.class);
  }

  private static void screenshot(String name) throws IOException {
    byte[] png = ((org.openqa.selenium.TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES);
    assertThat(png).hasSizeGreaterThan(1000);
    Path dir = Files.createDirectories(Path.of("target", "screenshots"));
    Files.write(dir.resolve(name), png);
    String docs = System.getProperty("strata.ui.screenshots");
    if (docs != null && !docs.isBlank()) {
      Files.write(Files.createDirectories(Path.of(docs)).resolve(name), png);
    }
  }

  @Test
  void overview_showsTheNumbersOfFsadminReport() throws Exception {
    driver.get(master + "/");
    assertThat(driver.getTitle()).startsWith("Strata Overview");
    ClusterInfo info = fs.getClusterInfo();
    Map<String, String> cli = cliReport();
    assertThat(value("summary", "Role")).isEqualTo("leader");
    assertThat(value("summary", "Version")).isNotEqualTo("unknown").isNotBlank();
    assertThat(value("summary", "Live workers")).isEqualTo("2").isEqualTo(cli.get("Live workers"));
    assertThat(value("summary", "Lost workers")).isEqualTo("0").isEqualTo(cli.get("Lost workers"));
    assertThat(info.capacityBytes()).isPositive();
    assertThat(value("summary", "Capacity")).isEqualTo(Sizes.bytesAndHuman(info.capacityBytes()))
        .isEqualTo(cli.get("Capacity"));
    for (String key : List.of("Used", "Available", "Files", "Directories", "Blocks")) {
      assertThat(value("summary", key)).as(key).isEqualTo(cli.get(key));
    }
    assertThat(value("summary", "Files")).isEqualTo(Long.toString(info.fileCount()));
    assertThat(info.fileCount()).isBetween(3L, 4L); // 4 once the persisted-file test has run
    // Per tier: the one default tier holds all capacity, over both workers' dirs.
    List<List<String>> tiers = rows("tiers");
    assertThat(tiers).hasSize(1);
    assertThat(tiers.get(0).get(1)).isEqualTo(Sizes.bytesAndHuman(info.capacityBytes()));
    assertThat(tiers.get(0).get(4)).isEqualTo("2");
    assertNoScript();
    screenshot("ui-overview.png");
  }

  @Test
  void browser_clicksIntoDirectories_andShowsAFilesStatusBlocksAndFirstKb() throws Exception {
    driver.get(master + "/");
    driver.findElement(By.linkText("Browse")).click();
    assertThat(driver.findElement(By.id("path")).getText()).isEqualTo("/");
    driver.findElement(By.linkText("data/")).click();
    driver.findElement(By.linkText("logs/")).click();
    assertThat(driver.findElement(By.id("path")).getText()).isEqualTo("/data/logs");
    assertThat(rows("listing")).hasSize(1);
    assertThat(rows("listing").get(0).get(2)).isEqualTo(Sizes.human(log.length));
    driver.findElement(By.linkText("app.log")).click();

    assertThat(value("stat", "path")).isEqualTo("/data/logs/app.log");
    assertThat(value("stat", "length")).isEqualTo(Integer.toString(log.length));
    assertThat(value("stat", "blocks")).isEqualTo("2");
    assertThat(value("stat", "persistence")).isEqualTo("NOT_PERSISTED");
    List<FileBlockInfo> blocks = fs.getBlockLocations("/data/logs/app.log");
    List<List<String>> shown = rows("blocks");
    assertThat(shown).hasSize(blocks.size());
    for (int i = 0; i < blocks.size(); i++) {
      FileBlockInfo b = blocks.get(i);
      List<String> workers = new ArrayList<>();
      for (BlockLocation l : b.locations()) {
        workers.add(l.address().toString());
      }
      assertThat(shown.get(i)).containsExactly(Long.toString(b.blockId()), Long.toString(b.offset()),
          Long.toString(b.length()), String.join(",", workers), b.locations().get(0).tier());
    }
    // The first KB, as text: the page shows exactly the file's first 1024 bytes (all ASCII here).
    String head = driver.findElement(By.id("head")).getText();
    String expected = new String(log, 0, 1024, StandardCharsets.UTF_8);
    assertThat(head.replace("\r", "")).isEqualTo(expected.stripTrailing());
    driver.manage().window().setSize(new Dimension(1280, 1500));
    try {
      screenshot("ui-browser.png");
    } finally {
      driver.manage().window().setSize(new Dimension(1280, 900));
    }
    assertNoScript();
  }

  @Test
  void persistedFileWithNoCachedCopy_showsItsFirstBytesFromTheUfs_withoutCachingThem() throws Exception {
    byte[] data = "written through to the under file system only\n".getBytes(StandardCharsets.UTF_8);
    try (FileOutStream out = fs.createFile("/through/only-in-ufs.txt", CreateFileOptions.defaults()
        .withRecursive(true).withWriteType(WriteType.THROUGH))) {
      out.write(data);
    }
    assertThat(fs.getBlockLocations("/through/only-in-ufs.txt").get(0).locations()).isEmpty();
    driver.get(master + "/browse?path=/through");
    driver.findElement(By.linkText("only-in-ufs.txt")).click();
    assertThat(value("stat", "persistence")).isEqualTo("PERSISTED");
    assertThat(rows("blocks").get(0).get(3)).isEmpty();
    assertThat(driver.findElement(By.id("head")).getText()).isEqualTo(new String(data, StandardCharsets.UTF_8).strip());
    // Looking did not cache it.
    assertThat(fs.getBlockLocations("/through/only-in-ufs.txt").get(0).locations()).isEmpty();
    assertNoScript();
  }

  @Test
  void htmlInNames_showsAsText_withNoScriptElementAndNoAlert() {
    driver.get(master + "/browse?path=/data");
    List<String> names = new ArrayList<>();
    for (List<String> row : rows("listing")) {
      names.add(row.get(0));
    }
    // "/data/<script>x</script>" is a dir "<script>x<" holding a file "script>" (a name cannot hold a /).
    assertThat(names).containsExactlyInAnyOrder("<script>x</", IMG_NAME, "logs/");
    assertThat(driver.findElements(By.tagName("img"))).isEmpty();
    assertNoScript();

    driver.findElement(By.linkText(IMG_NAME)).click();
    assertThat(value("stat", "path")).isEqualTo("/data/" + IMG_NAME);
    assertThat(driver.findElements(By.tagName("img"))).isEmpty();
    assertNoScript();

    driver.findElement(By.linkText("data")).click();
    driver.findElement(By.linkText("<script>x</")).click();
    driver.findElement(By.linkText("script>")).click();
    assertThat(value("stat", "path")).isEqualTo(SCRIPT_PATH);
    assertThat(driver.getTitle()).doesNotContain("<");
    assertThat(driver.findElement(By.id("path")).getText()).isEqualTo(SCRIPT_PATH);
    assertThat(driver.findElement(By.id("head")).getText()).isEqualTo("<script>alert(2)</script> is just text");
    assertThat(driver.getPageSource()).contains("&lt;script&gt;alert(2)&lt;/script&gt;");
    assertNoScript();
  }

  @Test
  void workerPage_listsItsDirsAndBlocks_andTheMastersWorkersPageAgrees() {
    var worker = cluster.worker(0);
    driver.get("http://127.0.0.1:" + worker.web().port() + "/");
    List<String> dirPaths = new ArrayList<>();
    for (List<String> row : rows("dirs")) {
      dirPaths.add(row.get(1));
      assertThat(row.get(2)).isEqualTo("OK");
    }
    List<String> expected = new ArrayList<>();
    for (BlockStore.DirReport d : worker.tieredStore().dirReports()) {
      expected.add(d.path());
    }
    assertThat(dirPaths).isNotEmpty().containsExactlyElementsOf(expected);
    List<String> blockIds = new ArrayList<>();
    for (List<String> row : rows("blocks")) {
      blockIds.add(row.get(0));
    }
    List<String> held = new ArrayList<>();
    for (BlockStore.BlockMeta b : worker.tieredStore().committedBlocks()) {
      held.add(Long.toString(b.blockId()));
    }
    assertThat(blockIds).containsExactlyInAnyOrderElementsOf(held);
    assertThat(value("summary", "Worker id")).isEqualTo(Long.toString(worker.workerId()));
    assertNoScript();

    driver.get(master + "/");
    driver.findElement(By.linkText("Workers")).click();
    List<String> addresses = new ArrayList<>();
    for (List<String> row : rows("workers")) {
      addresses.add(row.get(1));
    }
    assertThat(addresses).hasSize(2).contains("localhost:" + worker.rpcPort());
    assertThat(rows("dirs")).extracting(r -> r.get(2)).containsAll(expected);
  }

  @Test
  void mastersWorkersPage_linksEachWorkersOwnPage_onItsRealWebPort() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(master + "/workers")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(cluster.workers()).hasSize(2);
    for (var worker : cluster.workers()) {
      int webPort = worker.web().port();
      assertThat(webPort).isPositive().isNotEqualTo(cluster.master().web().port());
      String url = "http://localhost:" + webPort + "/";
      assertThat(page.body()).as("the link to worker %s's page", worker.rpcPort())
          .contains("<a href=\"" + url + "\">localhost:" + worker.rpcPort() + "</a>");
      HttpResponse<String> own = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(own.statusCode()).isEqualTo(200);
      assertThat(own.body()).contains("Worker localhost:" + worker.rpcPort())
          .contains("<th>Worker id</th><td>" + worker.workerId() + "</td>");
    }
    // the link a browser follows from the master lands on that worker's page
    var first = cluster.worker(0);
    driver.get(master + "/workers");
    driver.findElement(By.linkText("localhost:" + first.rpcPort())).click();
    assertThat(value("summary", "Worker id")).isEqualTo(Long.toString(first.workerId()));
  }

  @Test
  void configurationMasksCredentials_andMountsListTheRoot() throws Exception {
    driver.get(master + "/");
    driver.findElement(By.linkText("Configuration")).click();
    assertThat(driver.getPageSource()).doesNotContain(SECRET);
    boolean seen = false;
    for (List<String> row : rows("config")) {
      if (row.get(0).equals("strata.ui.test.secret.key")) {
        assertThat(row.get(1)).isEqualTo("******");
        seen = true;
      }
      if (row.get(0).equals("strata.master.rpc.port")) {
        assertThat(row.get(1)).isEqualTo(Integer.toString(cluster.masterPort()));
        assertThat(row.get(2)).isEqualTo("set");
      }
    }
    assertThat(seen).isTrue();
    driver.findElement(By.linkText("Mounts")).click();
    assertThat(rows("mounts")).extracting(r -> r.get(0)).contains("/");
    // Plain HTTP too: the pages refuse writes and carry the script-free policy.
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(master + "/")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(
        v -> assertThat(v).contains("default-src 'none'"));
    assertThat(http.send(HttpRequest.newBuilder(URI.create(master + "/no/such/page")).build(),
        HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
    HttpResponse<String> missing = http.send(HttpRequest.newBuilder(URI.create(master + "/browse?path=/nope")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).contains("Cannot show /nope");
    // a control character cannot be in a path: the request is bad, not the server
    HttpResponse<String> malformed = http.send(HttpRequest.newBuilder(
        URI.create(master + "/browse?path=/a%01b")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(malformed.statusCode()).isEqualTo(400);
    assertThat(malformed.body()).contains("Cannot show");
    // Paths as the CLI takes them: a trailing slash or a relative path is normalised.
    assertThat(http.send(HttpRequest.newBuilder(URI.create(master + "/browse?path=data/logs/")).build(),
        HttpResponse.BodyHandlers.ofString()).body()).contains("app.log</a>");
  }
}
