/*
 * MXNet symbol JSON: the layout MXNet writes (the MNIST MLP has 14 nodes, arg_nodes
 * [0,1,2,5,6,9,10,12], node_row_ptr 0..14, heads [[13,0,0]]; dmlc's JSONWriter formatting),
 * save/load round trips (same graph, same text), the legacy form and its upgrades, and the exact
 * errors for truncated, mistyped, cyclic and out-of-range input and unknown operators.
 */
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "symbol_test_util.h"

/** A small graph's exact text: dmlc's layout (", " + newline, 2-space indents). */
static void test_exact_text_small_graph(void) {
    mxk_symbol *x = NULL;
    mxk_symbol_variable("x", &x);
    mxk_symbol *fc = st_op("FullyConnected", "fc", x, "num_hidden", "2", "no_bias", "True");
    char *j = st_json(fc);
    const char *want = "{\n"
                       "  \"nodes\": [\n"
                       "    {\n"
                       "      \"op\": \"null\", \n"
                       "      \"name\": \"x\", \n"
                       "      \"inputs\": []\n"
                       "    }, \n"
                       "    {\n"
                       "      \"op\": \"null\", \n"
                       "      \"name\": \"fc_weight\", \n"
                       "      \"attrs\": {\n"
                       "        \"no_bias\": \"True\", \n"
                       "        \"num_hidden\": \"2\"\n"
                       "      }, \n"
                       "      \"inputs\": []\n"
                       "    }, \n"
                       "    {\n"
                       "      \"op\": \"FullyConnected\", \n"
                       "      \"name\": \"fc\", \n"
                       "      \"attrs\": {\n"
                       "        \"no_bias\": \"True\", \n"
                       "        \"num_hidden\": \"2\"\n"
                       "      }, \n"
                       "      \"inputs\": [[0, 0, 0], [1, 0, 0]]\n"
                       "    }\n"
                       "  ], \n"
                       "  \"arg_nodes\": [0, 1], \n"
                       "  \"node_row_ptr\": [0, 1, 2, 3], \n"
                       "  \"heads\": [[2, 0, 0]], \n"
                       "  \"attrs\": {\"mxnet_version\": [\"int\", 10901]}\n"
                       "}";
    CHECK(j != NULL && strcmp(j, want) == 0);
    if (j != NULL && strcmp(j, want) != 0)
        fprintf(stderr, "got:\n%s\n", j);
    free(j);
    /* one attribute: a one-line object */
    mxk_symbol *act = st_op("Activation", "a", x, "act_type", "relu", NULL, NULL);
    j = st_json(act);
    CHECK_CONTAINS(j, "      \"name\": \"a\", \n      \"attrs\": {\"act_type\": \"relu\"}, \n");
    free(j);
    mxk_symbol_free(act);
    mxk_symbol_free(fc);
    mxk_symbol_free(x);
}

/** Integer i of a JSON array (or -1). */
static long long jint(json_t *a, size_t i) {
    json_t *v = json_array_get(a, i);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

/* The MLP's nodes, arg_nodes, node_row_ptr, heads and attrs. */
static void test_mlp_layout(void) {
    mxk_symbol *mlp = st_mlp("128", "64");
    char *text = st_json(mlp);
    json_error_t e;
    json_t *root = text ? json_loads(text, 0, &e) : NULL;
    CHECK(root != NULL);
    if (root == NULL) {
        free(text);
        mxk_symbol_free(mlp);
        return;
    }
    json_t *nodes = json_object_get(root, "nodes");
    const char *names[] = {"data",       "fc1_weight", "fc1_bias",      "fc1",    "relu1",
                           "fc2_weight", "fc2_bias",   "fc2",           "relu2",  "fc3_weight",
                           "fc3_bias",   "fc3",        "softmax_label", "softmax"};
    const char *ops[] = {"null", "null",           "null",           "FullyConnected", "Activation",
                         "null", "null",           "FullyConnected", "Activation",     "null",
                         "null", "FullyConnected", "null",           "SoftmaxOutput"};
    CHECK_EQ_INT(json_array_size(nodes), 14);
    for (size_t i = 0; i < 14 && i < json_array_size(nodes); i++) {
        json_t *n = json_array_get(nodes, i);
        CHECK(strcmp(json_string_value(json_object_get(n, "name")), names[i]) == 0);
        CHECK(strcmp(json_string_value(json_object_get(n, "op")), ops[i]) == 0);
    }
    json_t *fc1 = json_array_get(nodes, 3);
    json_t *in = json_object_get(fc1, "inputs");
    CHECK_EQ_INT(json_array_size(in), 3);
    for (size_t k = 0; k < 3; k++) {
        CHECK_EQ_INT(jint(json_array_get(in, k), 0), (long long)k);
        CHECK_EQ_INT(jint(json_array_get(in, k), 1), 0);
        CHECK_EQ_INT(jint(json_array_get(in, k), 2), 0);
    }
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(fc1, "attrs"), "num_hidden")),
                 "128") == 0);
    /* auto-created weights carry their operator's attributes */
    json_t *w1 = json_object_get(json_array_get(nodes, 1), "attrs");
    CHECK(strcmp(json_string_value(json_object_get(w1, "num_hidden")), "128") == 0);
    CHECK(json_object_get(json_array_get(nodes, 0), "attrs") == NULL); /* omitted when empty */
    long long want_args[] = {0, 1, 2, 5, 6, 9, 10, 12};
    json_t *args = json_object_get(root, "arg_nodes");
    CHECK_EQ_INT(json_array_size(args), 8);
    for (size_t i = 0; i < 8; i++)
        CHECK_EQ_INT(jint(args, i), want_args[i]);
    json_t *rows = json_object_get(root, "node_row_ptr");
    CHECK_EQ_INT(json_array_size(rows), 15);
    for (size_t i = 0; i < 15; i++)
        CHECK_EQ_INT(jint(rows, i), (long long)i);
    json_t *heads = json_object_get(root, "heads");
    CHECK_EQ_INT(json_array_size(heads), 1);
    CHECK_EQ_INT(jint(json_array_get(heads, 0), 0), 13);
    json_t *ver = json_object_get(json_object_get(root, "attrs"), "mxnet_version");
    CHECK(strcmp(json_string_value(json_array_get(ver, 0)), "int") == 0);
    CHECK_EQ_INT(jint(ver, 1), 10901);
    /* more than 10 numbers: one per line, as dmlc writes them */
    CHECK_CONTAINS(text, "  \"arg_nodes\": [0, 1, 2, 5, 6, 9, 10, 12], \n  \"node_row_ptr\": [\n"
                         "    0, \n    1, \n");
    CHECK_CONTAINS(text, "    14\n  ], \n  \"heads\": [[13, 0, 0]], \n"
                         "  \"attrs\": {\"mxnet_version\": [\"int\", 10901]}\n}");
    json_decref(root);
    free(text);
    mxk_symbol_free(mlp);
}

/** Checks that load(save(s)) saves to the same text and lists the same names. */
static void check_round_trip(const mxk_symbol *s) {
    char *j1 = st_json(s);
    mxk_symbol *back = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json(j1, &back), MXK_OK);
    if (back == NULL) {
        fprintf(stderr, "from_json: %s\n", mxk_get_last_error());
        free(j1);
        return;
    }
    char *j2 = st_json(back);
    CHECK(j1 && j2 && strcmp(j1, j2) == 0);
    for (int kind = 0; kind < 3; kind++) {
        uint32_t n1 = 0, n2 = 0;
        char **l1 = NULL, **l2 = NULL;
        mxk_symbol_list_names(s, (mxk_symbol_names)kind, &n1, &l1);
        mxk_symbol_list_names(back, (mxk_symbol_names)kind, &n2, &l2);
        CHECK_EQ_INT(n1, n2);
        for (uint32_t i = 0; i < n1 && i < n2; i++)
            CHECK(strcmp(l1[i], l2[i]) == 0);
        mxk_string_list_free(l1);
        mxk_string_list_free(l2);
    }
    uint32_t a1 = 0, a2 = 0;
    char **kv1 = NULL, **kv2 = NULL;
    mxk_symbol_list_attrs(s, &a1, &kv1);
    mxk_symbol_list_attrs(back, &a2, &kv2);
    CHECK_EQ_INT(a1, a2);
    mxk_string_list_free(kv1);
    mxk_string_list_free(kv2);
    free(j1);
    free(j2);
    mxk_symbol_free(back);
}

/* Save then load gives the same graph and the same text. */
static void test_round_trips(void) {
    mxk_symbol *mlp = st_mlp("128", "64");
    check_round_trip(mlp);
    /* a group with a multi-output operator, aux states, a shared input and odd strings */
    mxk_symbol *data = NULL;
    mxk_symbol_variable("da\"ta\n\t\\ \x01 \xc3\xa9", &data);
    mxk_symbol_set_attr(data, "shape", "(1,3,8,8)");
    mxk_symbol_set_attr(data, "note", "quote \" back \\ tab \t é");
    mxk_symbol *bn = st_op("BatchNorm", "bn", data, "output_mean_var", "True", "eps", "0.01");
    mxk_symbol *conv = st_op("TestConv", "conv", data, "kernel", "(3,3)", "num_filter", "4");
    mxk_symbol *mean = NULL;
    mxk_symbol_get_output(bn, 1, &mean);
    mxk_symbol *parts[] = {conv, bn, mean, mlp};
    mxk_symbol *g = NULL;
    CHECK_EQ_INT(mxk_symbol_group(4, parts, &g), MXK_OK);
    check_round_trip(g);
    CHECK_NAMES(g, MXK_SYMBOL_OUTPUTS, "conv_output", "bn_output", "bn_mean", "bn_var", "bn_mean",
                "softmax_output");
    mxk_symbol *all[] = {data, bn, conv, mean, g, mlp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_symbol_free(all[i]);
}

/* Files: save, load, I/O errors name the path. */
static void test_files(void) {
    char path[] = "/tmp/mxk_symbol_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    mxk_symbol *mlp = st_mlp("16", "8"), *back = NULL;
    CHECK_EQ_INT(mxk_symbol_save(mlp, path), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_load(path, &back), MXK_OK);
    char *a = st_json(mlp), *b = back ? st_json(back) : NULL;
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    mxk_symbol_free(back);
    FILE *f = fopen(path, "w");
    fputs("{\"nodes\": [", f);
    fclose(f);
    back = (mxk_symbol *)1;
    mxk_status st = mxk_symbol_load(path, &back);
    CHECK_EQ_INT(st, MXK_ERR_FORMAT);
    CHECK(back == NULL);
    char want[256];
    snprintf(want, sizeof want, "%s: symbol JSON: invalid JSON at line 1, column 11: ", path);
    CHECK(strncmp(mxk_get_last_error(), want, strlen(want)) == 0);
    unlink(path);
    CHECK_ERROR(mxk_symbol_load(path, &back), MXK_ERR_IO,
                (snprintf(want, sizeof want,
                          "cannot open symbol file "
                          "'%s': No such file or "
                          "directory",
                          path),
                 want));
    CHECK_EQ_INT(mxk_symbol_save(mlp, "/nonexistent-dir/x.json"), MXK_ERR_IO);
    mxk_symbol_free(mlp);
}

/** Loads `json`, expects failure with `code` and exactly `msg`. */
static void expect_error(const char *json, mxk_status code, const char *msg, int line) {
    mxk_symbol *s = (mxk_symbol *)1;
    mxk_status st = mxk_symbol_from_json(json, &s);
    if (st != code || strcmp(mxk_get_last_error(), msg) != 0) {
        fprintf(stderr, "line %d: status %s, message\n  got:  %s\n  want: %s\n", line,
                mxk_status_name(st), mxk_get_last_error(), msg);
        mxk_t_failed_checks++;
    }
    CHECK(s == NULL);
    if (st == MXK_OK)
        mxk_symbol_free(s);
}
#define EXPECT_ERROR(json, code, msg) expect_error(json, code, msg, __LINE__)

/** A current-form document around `nodes` with the given heads (and arg_nodes []). */
static char *doc(const char *nodes, const char *heads) {
    size_t n = strlen(nodes) + strlen(heads) + 128;
    char *d = malloc(n);
    snprintf(d, n, "{\"nodes\": [%s], \"arg_nodes\": [], \"heads\": %s}", nodes, heads);
    return d;
}

#define VAR(name) "{\"op\": \"null\", \"name\": \"" name "\", \"inputs\": []}"
#define FC3(name, a, b, c)                                                                         \
    "{\"op\": \"FullyConnected\", \"name\": \"" name "\", \"attrs\": {\"num_hidden\": \"4\"}, "    \
    "\"inputs\": [" a ", " b ", " c "]}"

/* Malformed documents: the exact messages. */
static void test_malformed_errors(void) {
    EXPECT_ERROR("", MXK_ERR_FORMAT,
                 "symbol JSON: invalid JSON at line 1, column 0: '[' or '{' expected near end of "
                 "file");
    EXPECT_ERROR("[]", MXK_ERR_FORMAT, "symbol JSON: the document must be an object, got an array");
    EXPECT_ERROR("{}", MXK_ERR_FORMAT, "symbol JSON: missing field 'nodes'");
    EXPECT_ERROR("{\"nodes\": {}, \"arg_nodes\": [], \"heads\": []}", MXK_ERR_FORMAT,
                 "symbol JSON: \"nodes\" must be an array, got an object");
    EXPECT_ERROR("{\"nodes\": [], \"arg_nodes\": [], \"heads\": [], \"extra\": 1}", MXK_ERR_FORMAT,
                 "symbol JSON: unknown top-level field 'extra' (expected nodes, arg_nodes, "
                 "node_row_ptr, heads, attrs)");
    EXPECT_ERROR("{\"nodes\": [], \"nodes\": [], \"arg_nodes\": [], \"heads\": []}", MXK_ERR_FORMAT,
                 "symbol JSON: invalid JSON at line 1, column 21: duplicate object key near "
                 "'\"nodes\"'");
    EXPECT_ERROR("{\"nodes\": [], \"arg_nodes\": [], \"heads\": []}", MXK_ERR_FORMAT,
                 "symbol JSON: \"nodes\" is empty");

    char *d = doc(VAR("x"), "[]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: \"heads\" is empty: a symbol needs at least one output");
    free(d);
    d = doc("{\"op\": \"null\", \"name\": 3, \"inputs\": []}", "[[0, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 0: \"name\" must be a string, got an integer");
    free(d);
    d = doc("{\"op\": \"null\", \"inputs\": []}", "[[0, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT, "symbol JSON: node 0: missing field 'name'");
    free(d);
    d = doc("{\"op\": \"null\", \"name\": \"x\", \"inputs\": [], \"colour\": 1}", "[[0, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 0 ('x'): unknown field 'colour' (a node has op, name, inputs, "
                 "attrs, attr, param, control_deps, subgraphs, backward_source_id)");
    free(d);
    d = doc("{\"op\": \"null\", \"name\": \"x\", \"inputs\": [], \"attrs\": {\"a\": 1}}",
            "[[0, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 0 ('x'): \"attrs\" value of 'a' must be a string, got an "
                 "integer");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, \"0\"]", "[1, 0]", "[2, 0]"),
            "[[3, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 3 ('fc1'): input 0: element 1 must be a non-negative integer, "
                 "got a string");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0]", "[1, 0]", "[2, 0]"),
            "[[3, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 3 ('fc1'): input 0 must have 2 or 3 elements [node, "
                 "index(, version)], got 1");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, -1]", "[1, 0]", "[2, 0]"),
            "[[3, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 3 ('fc1'): input 0: element 1 must be a non-negative integer, "
                 "got a negative or too large integer");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, 0]", "[1, 0]", "[2, 0]"),
            "{}");
    EXPECT_ERROR(d, MXK_ERR_FORMAT, "symbol JSON: \"heads\" must be an array, got an object");
    free(d);
    EXPECT_ERROR("{\"nodes\": [" VAR("x") "], \"arg_nodes\": [], \"heads\": [[0, 0]], "
                                          "\"attrs\": {\"mxnet_version\": [\"int\", \"x\"]}}",
                 MXK_ERR_FORMAT, "symbol JSON: \"mxnet_version\" must be [\"int\", VERSION]");
}

/* Graph errors: cycles, out-of-range ids and output indices, arg_nodes, row pointers. */
static void test_graph_errors(void) {
    /* node 3 refers to node 7 (a later node: a cycle or forward reference) */
    char *d = doc(
        VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[7, 0]", "[1, 0]", "[2, 0]") ", " VAR(
            "a") ", " VAR("b") ", " VAR("c") ", " VAR("d"),
        "[[3, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 3 ('fc1'): input 0 refers to node 7, but only nodes before it "
                 "may be inputs");
    free(d);
    /* a node that is its own input */
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, 0]", "[3, 0]", "[2, 0]"),
            "[[3, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 3 ('fc1'): input 1 refers to node 3, but only nodes before it "
                 "may be inputs");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, 0]", "[1, 0]", "[70, 0]"),
            "[[3, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 3 ('fc1'): input 2 refers to node 70, but there are only 4 "
                 "nodes");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, 0]", "[1, 2]", "[2, 0]"),
            "[[3, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 3 ('fc1'): input 1 refers to output 2 of node 1 ('w'), which "
                 "has 1 output");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, 0]", "[1, 0]", "[2, 0]"),
            "[[99, 0, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: heads[0] refers to node 99, but there are only 4 nodes");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3("fc1", "[0, 0]", "[1, 0]", "[2, 0]"),
            "[[3, 1, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: heads[0] refers to output 1 of node 3 ('fc1'), which has 1 output");
    free(d);
    EXPECT_ERROR("{\"nodes\": [" VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3(
                     "fc1", "[0, 0]", "[1, 0]", "[2, 0]") "], \"arg_nodes\": [0, 3], "
                                                          "\"heads\": [[3, 0]]}",
                 MXK_ERR_FORMAT,
                 "symbol JSON: arg_nodes[1] is node 3 ('fc1'), which is not a variable");
    EXPECT_ERROR("{\"nodes\": [" VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3(
                     "fc1", "[0, 0]", "[1, 0]", "[2, 0]") "], \"arg_nodes\": [0, 1, 0], "
                                                          "\"heads\": [[3, 0]]}",
                 MXK_ERR_FORMAT, "symbol JSON: arg_nodes[2]: node 0 is listed twice");
    EXPECT_ERROR("{\"nodes\": [" VAR("x") ", " VAR("w") ", " VAR("b") ", " FC3(
                     "fc1", "[0, 0]", "[1, 0]", "[2, 0]") "], \"arg_nodes\": [0, 1, 2], "
                                                          "\"node_row_ptr\": [0, 1, 2], "
                                                          "\"heads\": [[3, 0]]}",
                 MXK_ERR_FORMAT,
                 "symbol JSON: \"node_row_ptr\" must have 5 entries (nodes + 1), got 3");
    /* a current-form file must list every input */
    d = doc(VAR("x") ", " VAR("w") ", {\"op\": \"FullyConnected\", \"name\": \"fc1\", \"attrs\": "
                                   "{\"num_hidden\": \"4\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}",
            "[[2, 0, 0]]");
    char *d2 = malloc(strlen(d) + 64);
    snprintf(d2, strlen(d) + 64, "%.*s, \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}",
             (int)strlen(d) - 1, d);
    EXPECT_ERROR(d2, MXK_ERR_FORMAT,
                 "symbol JSON: node 2 ('fc1'): operator FullyConnected takes 3 inputs (data, "
                 "weight, bias), the file gives 2");
    free(d2);
    free(d);
    d = doc(VAR("x") ", {\"op\": \"null\", \"name\": \"y\", \"inputs\": [[0, 0]]}", "[[1, 0]]");
    EXPECT_ERROR(d, MXK_ERR_FORMAT,
                 "symbol JSON: node 1 ('y'): a variable (op \"null\") has no inputs, got 1");
    free(d);
}

/* Unknown operators and attributes name the operator and the node; bad values are
 * format errors; subgraphs are unsupported. */
static void test_operator_errors(void) {
    char *d = doc(VAR("x") ", {\"op\": \"FullyConnectedX\", \"name\": \"fc1\", \"inputs\": "
                           "[[0, 0]]}",
                  "[[1, 0]]");
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json(d, &s), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "symbol JSON: node 1 ('fc1'): unknown operator "
                                         "'FullyConnectedX': no loaded plugin registers it; "
                                         "did you mean 'FullyConnected'?");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", {\"op\": \"FullyConnected\", \"name\": "
                                                 "\"fc1\", \"attrs\": {\"num_hidden\": \"4\", "
                                                 "\"colour\": \"red\"}, \"inputs\": [[0, 0], "
                                                 "[1, 0], [2, 0]]}",
            "[[3, 0]]");
    CHECK_EQ_INT(mxk_symbol_from_json(d, &s), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "symbol JSON: node 3 ('fc1'): FullyConnected: unknown "
                                         "attribute 'colour'");
    free(d);
    d = doc(VAR("x") ", " VAR("w") ", " VAR("b") ", {\"op\": \"FullyConnected\", \"name\": "
                                                 "\"fc1\", \"attrs\": {\"num_hidden\": \"four\"}, "
                                                 "\"inputs\": [[0, 0], [1, 0], [2, 0]]}",
            "[[3, 0]]");
    CHECK_EQ_INT(mxk_symbol_from_json(d, &s), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxk_get_last_error(), "symbol JSON: node 3 ('fc1'): FullyConnected: ");
    CHECK_CONTAINS(mxk_get_last_error(), "four");
    free(d);
    d = doc(VAR("x") ", {\"op\": \"Flatten\", \"name\": \"f\", \"inputs\": [[0, 0]], "
                     "\"subgraphs\": [{}]}",
            "[[1, 0]]");
    EXPECT_ERROR(d, MXK_ERR_UNSUPPORTED,
                 "symbol JSON: node 1 ('f'): subgraphs (control-flow operators) are not supported");
    free(d);
}

/* Every truncation of a valid file is an error, never a crash or a success. */
static void test_every_truncation_fails(void) {
    mxk_symbol *mlp = st_mlp("128", "64");
    char *j = st_json(mlp);
    size_t n = j ? strlen(j) : 0;
    int bad = 0;
    for (size_t len = 0; len < n; len++) {
        char *t = strndup(j, len);
        mxk_symbol *s = NULL;
        mxk_status st = mxk_symbol_from_json(t, &s);
        if (st != MXK_ERR_FORMAT || s != NULL ||
            strncmp(mxk_get_last_error(), "symbol JSON: ", 13) != 0)
            bad++;
        mxk_symbol_free(s);
        free(t);
    }
    CHECK_EQ_INT(bad, 0);
    free(j);
    mxk_symbol_free(mlp);
}

/* Legacy form (MXNet <= 0.8): param/attr, pairs, backward_source_id, hidden-key upgrade,
 * aux states added back, variables of suffixed hidden keys, argmax axis=-1. */
static void test_legacy_upgrade(void) {
    const char *legacy =
        "{\"nodes\": ["
        "{\"op\": \"null\", \"param\": {}, \"name\": \"data\", \"inputs\": [], "
        "\"backward_source_id\": -1, \"attr\": {\"ctx_group\": \"g1\", \"lr_mult\": \"0.2\"}},"
        "{\"op\": \"null\", \"param\": {}, \"name\": \"w\", \"inputs\": [], "
        "\"backward_source_id\": -1, \"attr\": {\"weight_lr_mult\": \"1.2\"}},"
        "{\"op\": \"null\", \"param\": {}, \"name\": \"fc_bias\", \"inputs\": [], "
        "\"backward_source_id\": -1},"
        "{\"op\": \"FullyConnected\", \"param\": {\"num_hidden\": \"8\", \"no_bias\": \"False\"},"
        " \"name\": \"fc\", \"inputs\": [[0, 0], [1, 0], [2, 0]], \"backward_source_id\": -1, "
        "\"attr\": {\"weight_lr_mult\": \"1.2\", \"bias_wd_mult\": \"0\", \"num_hidden\": "
        "\"8\"}},"
        "{\"op\": \"BatchNorm\", \"param\": {\"eps\": \"0.001\"}, \"name\": \"bn\", "
        "\"inputs\": [[3, 0]], \"backward_source_id\": -1, \"attr\": {\"ctx_group\": \"g2\"}}"
        "], \"arg_nodes\": [0, 1, 2], \"heads\": [[4, 0]]}";
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json(legacy, &s), MXK_OK);
    if (s == NULL) {
        fprintf(stderr, "%s\n", mxk_get_last_error());
        return;
    }
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "data", "w", "fc_bias", "bn_gamma", "bn_beta");
    CHECK_NAMES(s, MXK_SYMBOL_AUX_STATES, "bn_moving_mean", "bn_moving_var");
    char buf[64];
    CHECK(strcmp(st_internal_attr(s, "data", "__ctx_group__", buf, sizeof buf), "g1") == 0);
    CHECK(strcmp(st_internal_attr(s, "data", "__lr_mult__", buf, sizeof buf), "0.2") == 0);
    /* fc's weight_lr_mult moved onto its weight input; the variable's own stays as is */
    CHECK(strcmp(st_internal_attr(s, "w", "__lr_mult__", buf, sizeof buf), "1.2") == 0);
    CHECK(strcmp(st_internal_attr(s, "w", "weight_lr_mult", buf, sizeof buf), "1.2") == 0);
    CHECK(strcmp(st_internal_attr(s, "fc_bias", "__wd_mult__", buf, sizeof buf), "0") == 0);
    CHECK(strcmp(st_internal_attr(s, "fc_output", "weight_lr_mult", buf, sizeof buf), "") == 0);
    /* attr wins over param for the same key; param fills the rest */
    CHECK(strcmp(st_internal_attr(s, "fc_output", "num_hidden", buf, sizeof buf), "8") == 0);
    CHECK(strcmp(st_internal_attr(s, "fc_output", "no_bias", buf, sizeof buf), "False") == 0);
    /* aux states added back with the node's attributes and the 0.9.4 init hints */
    CHECK(strcmp(st_internal_attr(s, "bn_moving_mean", "__ctx_group__", buf, sizeof buf), "g2") ==
          0);
    CHECK(strcmp(st_internal_attr(s, "bn_moving_mean", "eps", buf, sizeof buf), "0.001") == 0);
    CHECK(strcmp(st_internal_attr(s, "bn_moving_var", "__init__", buf, sizeof buf),
                 "[\"one\", {}]") == 0);
    check_round_trip(s);
    mxk_symbol_free(s);

    /* "mood" is no input: the key stays on the node, where the operator rejects it
     * (as MXNet's final parse does) */
    mxk_symbol *bad = (mxk_symbol *)1;
    CHECK_EQ_INT(mxk_symbol_from_json(
                     "{\"nodes\": [" VAR("x") ", {\"op\": \"Flatten\", "
                                              "\"name\": \"f\", \"inputs\": [[0, 0]], \"attr\": "
                                              "{\"mood_lr_mult\": \"3\"}}], \"arg_nodes\": [0], "
                                              "\"heads\": [[1, 0]]}",
                     &bad),
                 MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "symbol JSON: node 1 ('f'): Flatten: unknown attribute "
                                         "'mood_lr_mult'");
    CHECK(bad == NULL);

    /* a current-version file is not upgraded: a missing input is an error, keys stay */
    const char *current = "{\"nodes\": [" VAR(
        "x") ", {\"op\": \"null\", \"name\": \"v\", "
             "\"attrs\": {\"lr_mult\": \"2\"}, \"inputs\": []}], \"arg_nodes\": [0, 1], "
             "\"heads\": [[1, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", "
             "10901]}}";
    CHECK_EQ_INT(mxk_symbol_from_json(current, &s), MXK_OK);
    if (s != NULL) {
        CHECK(mxk_symbol_get_attr(s, "__lr_mult__") == NULL);
        uint32_t n = 0;
        char **kv = NULL;
        CHECK_EQ_INT(mxk_symbol_list_attrs(s, &n, &kv), MXK_OK);
        CHECK(n == 1 && strcmp(kv[0], "v$lr_mult") == 0 && strcmp(kv[1], "2") == 0);
        mxk_string_list_free(kv);
        mxk_symbol_free(s);
    }
}

/* Input versions count a variable's mutations as nnvm's UpdateNodeVersion does: an aux
 * state is written with version 1, a second BatchNorm sharing it with 2, and a plain
 * use after them records the current version (the JSON MXNet 1.9.1 writes for the
 * same graph: mx.sym.BatchNorm(..., moving_mean=mm) twice, elemwise_add between). */
static void test_entry_versions(void) {
    mxk_symbol *data = NULL, *mm = NULL, *bn1 = NULL, *b2 = NULL, *add = NULL, *b3 = NULL;
    mxk_symbol_variable("data", &data);
    mxk_symbol_variable("mm", &mm);
    bn1 = st_op("BatchNorm", "bn1", data, NULL, NULL, NULL, NULL);
    const char *names[] = {"data", "moving_mean"};
    mxk_symbol *in2[] = {bn1, mm};
    CHECK_EQ_INT(mxk_symbol_create("BatchNorm", "b2", 0, NULL, NULL, 2, names, in2, &b2), MXK_OK);
    mxk_symbol *in_add[] = {b2, mm};
    CHECK_EQ_INT(mxk_symbol_create("elemwise_add", "add", 0, NULL, NULL, 2, NULL, in_add, &add),
                 MXK_OK);
    mxk_symbol *in3[] = {add, mm};
    CHECK_EQ_INT(mxk_symbol_create("BatchNorm", "b3", 0, NULL, NULL, 2, names, in3, &b3), MXK_OK);
    char *json = NULL;
    CHECK_EQ_INT(mxk_symbol_to_json(b3, &json), MXK_OK);
    CHECK(json != NULL);
    if (json == NULL)
        return;
    /* nodes: data 0, bn1_gamma 1, bn1_beta 2, bn1_moving_mean 3, bn1_moving_var 4, bn1 5,
     * b2_gamma 6, b2_beta 7, mm 8, b2_moving_var 9, b2 10, add 11, b3_gamma 12, ... */
    CHECK(strstr(json, "\"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]"));
    CHECK(strstr(json, "\"inputs\": [[5, 0, 0], [6, 0, 0], [7, 0, 0], [8, 0, 1], [9, 0, 1]]"));
    CHECK(strstr(json, "\"inputs\": [[10, 0, 0], [8, 0, 1]]"));
    CHECK(strstr(json, "\"inputs\": [[11, 0, 0], [12, 0, 0], [13, 0, 0], [8, 0, 2], [14, 0, 1]]"));
    free(json);
    mxk_symbol_free(b3);
    mxk_symbol_free(add);
    mxk_symbol_free(b2);
    mxk_symbol_free(bn1);
    mxk_symbol_free(mm);
    mxk_symbol_free(data);
}

int main(void) {
    if (st_setup() != 0)
        return 1;
    MXK_RUN(test_exact_text_small_graph);
    MXK_RUN(test_mlp_layout);
    MXK_RUN(test_round_trips);
    MXK_RUN(test_files);
    MXK_RUN(test_malformed_errors);
    MXK_RUN(test_graph_errors);
    MXK_RUN(test_operator_errors);
    MXK_RUN(test_every_truncation_fails);
    MXK_RUN(test_legacy_upgrade);
    MXK_RUN(test_entry_versions);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
