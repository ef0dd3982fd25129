/* Placeholder until the master's main lands. */
int main(void)
{
    return 0;
}
